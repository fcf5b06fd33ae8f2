// Owner: the token that lets one batch of edits change its own new nodes in place.

package persist

import "sync/atomic"

// ids hands out owner tokens and node identities. It never wraps: at a
// billion a second, 2^64 lasts over 500 years.
var ids atomic.Uint64

func newID() uint64 { return ids.Add(1) }

// Owner is the token of one batch of edits. Nodes created by an edit made
// with an Owner carry it, and later edits with the same Owner change those
// nodes in place instead of copying them. An Owner is used by one goroutine
// at a time.
type Owner struct {
	id     uint64
	copied int // bytes of node storage allocated by edits made with this Owner
}

// NewOwner returns an Owner that no node carries yet.
func NewOwner() *Owner { return &Owner{id: newID()} }

// Seal ends the batch: every node made with o so far becomes immutable. Later
// edits with o start a new batch, which copies those nodes before changing
// them.
func (o *Owner) Seal() { o.id = newID() }

// Copied returns how many bytes of node storage the edits made with o have
// allocated, over all its batches: the copies of the nodes on their paths,
// and the nodes that splits made. An edit that changes in place only the
// nodes its batch owns allocates nothing. It measures what a batch costs
// beyond the O(log n) steps of each edit.
func (o *Owner) Copied() int { return o.copied }

// token returns the owner token for one edit: o's, or a fresh one for a nil
// o, which no other edit shares, so that nothing made by the edit can be
// changed after it returns.
func (o *Owner) token() uint64 {
	if o == nil {
		return newID()
	}
	return o.id
}
