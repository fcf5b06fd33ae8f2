// Package persist holds persistent containers with structural sharing: [Seq],
// a sequence with positional edits, and [Map], an insertion-ordered map from
// string keys. They are the engine under the JSON tree and the message list.
//
// An edit returns a new container and leaves the old one as it was: it
// copies the O(log n) nodes on its path and shares the rest. Both are
// B+trees whose leaves hold the elements in order; a container of at most
// 32 elements ([FlatMax]) is a single flat leaf, one slice.
//
// Use [Seq] for JSON arrays and other sequences, [Builder] to make one from
// elements that arrive one by one, and [Map] for JSON objects and the
// message list. A [Measure] keeps a summary of the elements (for
// JSON, their text size and nesting depth) in every node, so the summary of
// a whole container costs nothing to read.
//
// Use an [Owner] to edit in batches. Nodes made during a batch carry its
// owner and later edits of the same batch change them in place, so a batch
// copies each node at most once; [Owner.Copied] counts the bytes it copied.
// A nil *Owner makes every edit persistent.
//
// # Concurrency
//
// A container is immutable once no edit made with the Owner of its nodes
// will follow: after [Owner.Seal], or at once when the Owner is nil. Any
// number of goroutines may then read it and edit it persistently.
// An Owner belongs to one goroutine; while it edits, other values made with
// it may change.
package persist
