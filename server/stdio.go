package server

import (
	"context"
	"io"
	"log"

	mcpserver "github.com/mark3labs/mcp-go/server"
)

// ServeStdio serves MCP over stdio until ctx ends or in closes. stdout
// carries only JSON-RPC; mcp-go's own errors go to errLog. Tool calls are
// metered, traced and logged (on the deps logger, i.e. stderr) like calls
// over HTTP, with transport "stdio"; gates apply as for remote callers.
func ServeStdio(ctx context.Context, deps Deps, in io.Reader, out io.Writer, errLog *log.Logger) error {
	stdio := mcpserver.NewStdioServer(NewMCPServer(deps))
	stdio.SetErrorLogger(errLog)
	// One state for the whole stdio session: there is no HTTP request, and
	// the single local client has no principal.
	st := &requestState{tel: newTelemetry(deps), transport: "stdio", toolsets: deploymentToolsets(deps.Registry, deps.Config.MCP)}
	stdio.SetContextFunc(func(ctx context.Context) context.Context {
		return context.WithValue(ctx, requestStateKey{}, st)
	})
	return stdio.Listen(ctx, in, out)
}
