package bind

import (
	"fmt"
	"sync/atomic"
)

// Once is a value set once, after what holds it was built: the one way a
// provider may depend on something built after it (central AAA's state is
// its service's, which follows the engine that applies through the
// provider's drivers). Reading it before it is set is an error that says
// what was read too early, never a silent zero.
type Once[T any] struct {
	What string // what the value is, for the error
	v    atomic.Pointer[T]
}

// Set sets the value; setting it twice panics, as a wiring bug.
func (o *Once[T]) Set(v *T) {
	if !o.v.CompareAndSwap(nil, v) {
		panic(fmt.Sprintf("bind: %s set twice", o.What))
	}
}

// Get returns the value, or an error if it is not set yet.
func (o *Once[T]) Get() (*T, error) {
	if v := o.v.Load(); v != nil {
		return v, nil
	}
	return nil, fmt.Errorf("%s is read before it started", o.What)
}
