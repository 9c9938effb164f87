//go:build !unix

package snapshot

import "os"

// hardLinks is 1: the link count is not read on this platform.
func hardLinks(os.FileInfo) uint64 { return 1 }

// keepOwner does nothing: owners are not kept on this platform.
func keepOwner(*os.File, os.FileInfo) {}
