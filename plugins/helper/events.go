package helper

import "fmt"

// As asserts a cluster event's old and new objects to T, as kube's util.As
// does for queueing hints; either object may be nil. A wrong type is an
// error, which the queue treats as Queue.
func As[T any](oldObj, newObj any) (T, T, error) {
	var oldT, newT T
	var ok bool
	if newObj != nil {
		if newT, ok = newObj.(T); !ok {
			return oldT, newT, fmt.Errorf("expected %T, but got %T", newT, newObj)
		}
	}
	if oldObj != nil {
		if oldT, ok = oldObj.(T); !ok {
			return oldT, newT, fmt.Errorf("expected %T, but got %T", oldT, oldObj)
		}
	}
	return oldT, newT, nil
}
