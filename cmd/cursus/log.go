package main

import (
	"io"
	"log"
)

// newStdLogger is a standard-library logger on stderr for mcp-go's stdio
// transport, which must never write to stdout.
func newStdLogger(w io.Writer) *log.Logger { return log.New(w, "mcp: ", log.LstdFlags) }
