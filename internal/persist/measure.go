// Measure: the summary that each node keeps of the items below it.

package persist

// Measure defines the summary S that a container keeps of its elements of
// type T. The summary of a container is the Add of the summaries of its
// elements, in any order: Add must be associative and commutative, and the
// zero S must be its identity. For JSON text, S holds the total size of the
// elements and their greatest depth, with how many elements reach it.
//
// Measure types are usually empty structs; their methods must not depend on
// anything but their arguments.
type Measure[T, S any] interface {
	// Of returns the summary of one element.
	Of(v T) S
	// Add returns the summary of the elements of a and b together.
	Add(a, b S) S
	// Sub returns the summary of a without b, where b is part of a. It
	// reports false when it cannot tell (a maximum that b may have held);
	// the container then adds up its elements again.
	Sub(a, b S) (S, bool)
}
