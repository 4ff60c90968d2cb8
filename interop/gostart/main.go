// Command gostart starts a cursus-configure-pipeline run with the official
// Go MCP SDK client and passes its first gate on the DAG file it is given,
// then prints the run token: scripts/interop.sh hands the token to the
// TypeScript SDK client (interop/ts-client.mjs), which finishes the run.
// Loopback only, as the other interop checks.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "gostart:", err)
		os.Exit(1)
	}
}

func run() error {
	base, err := url.Parse(os.Getenv("CURSUS_URL"))
	if err != nil || (base.Hostname() != "127.0.0.1" && base.Hostname() != "localhost" && base.Hostname() != "::1") {
		return fmt.Errorf("CURSUS_URL %q is not a loopback address", os.Getenv("CURSUS_URL"))
	}
	if len(os.Args) != 2 {
		return errors.New("usage: gostart DAG.json")
	}
	raw, err := os.ReadFile(os.Args[1])
	if err != nil {
		return err
	}
	var dag map[string]any
	if err := json.Unmarshal(raw, &dag); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "cursus-interop-go", Version: "1.0.0"}, nil).
		Connect(ctx, &sdk.StreamableClientTransport{Endpoint: base.String() + "/mcp", DisableStandaloneSSE: true}, nil)
	if err != nil {
		return err
	}
	defer cs.Close()
	started, err := call(ctx, cs, "workflow__start", map[string]any{"workflow": "cursus-configure-pipeline"})
	if err != nil {
		return err
	}
	passed, err := call(ctx, cs, "workflow__submit", map[string]any{"run": started["run"], "stage": "Constrain", "content": map[string]any{"dag": dag}})
	if err != nil {
		return err
	}
	if passed["status"] != "passed" {
		return fmt.Errorf("stage Constrain did not pass: %v", passed)
	}
	fmt.Println(passed["run"])
	return nil
}

// call runs a tool and returns the data of its envelope.
func call(ctx context.Context, cs *sdk.ClientSession, tool string, args map[string]any) (map[string]any, error) {
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", tool, err)
	}
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil {
		return nil, err
	}
	var env struct {
		OK    bool           `json:"ok"`
		Error string         `json:"error"`
		Data  map[string]any `json:"data"`
	}
	if err := json.Unmarshal(raw, &env); err != nil {
		return nil, err
	}
	if res.IsError || !env.OK {
		return nil, fmt.Errorf("%s: %s", tool, env.Error)
	}
	return env.Data, nil
}
