//go:build !(linux && cgo)

package guard

// canJoin: without cgo there is no constructor to join namespaces with;
// each sandboxed guardian makes its own.
const canJoin = false
