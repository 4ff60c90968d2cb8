package deploy

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

const (
	clientExampleURL = "https://cursus.example.com/mcp"
	clientToken      = "deploy-test-client-token"
)

// mcpServerEntry is the union of the client config shapes: stdio
// (command/args/env) and remote (url/headers).
type mcpServerEntry struct {
	Type    string            `json:"type"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
}

// remoteClient is how one client reaches the remote server: a URL and the
// Authorization header, with the token variable already substituted.
type remoteClient struct {
	name, url, authorization string
}

// expand substitutes the ways these configs name the token variable.
func expand(s string, env map[string]string) string {
	for k, v := range env {
		s = strings.NewReplacer("${env:"+k+"}", v, "${"+k+"}", v).Replace(s)
	}
	return s
}

func loadClientConfigs(t *testing.T) (remotes []remoteClient, locals map[string]mcpServerEntry) {
	t.Helper()
	locals = map[string]mcpServerEntry{}
	tokenEnv := map[string]string{"CURSUS_TOKEN": clientToken}
	for _, file := range []string{"claude-code.mcp.json", "claude-desktop.json", "cursor.json", "kiro.json", "vscode.json"} {
		var cfg struct {
			MCPServers map[string]mcpServerEntry `json:"mcpServers"`
			// VS Code's mcp.json names them servers, each with its type,
			// and prompts for the token (an input) instead of reading it
			// from the environment.
			Servers map[string]mcpServerEntry `json:"servers"`
			Inputs  []struct {
				ID       string `json:"id"`
				Password bool   `json:"password"`
			} `json:"inputs"`
		}
		if err := json.Unmarshal(readRepoFile(t, "deploy/clients/"+file), &cfg); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if file == "vscode.json" {
			if cfg.MCPServers != nil || cfg.Servers["cursus"].Type != "http" || cfg.Servers["cursus-local"].Type != "stdio" {
				t.Fatalf("%s: want servers (not mcpServers) with cursus of type http and cursus-local of type stdio", file)
			}
			cfg.MCPServers = cfg.Servers
			for _, in := range cfg.Inputs {
				if !in.Password {
					t.Errorf("%s: input %s is not a password prompt", file, in.ID)
				}
				tokenEnv["input:"+in.ID] = clientToken
			}
		}
		remote, ok := cfg.MCPServers["cursus"]
		if !ok {
			t.Fatalf("%s: no mcpServers.cursus entry", file)
		}
		switch {
		case remote.URL != "":
			remotes = append(remotes, remoteClient{file, remote.URL, expand(remote.Headers["Authorization"], tokenEnv)})
		case remote.Command == "npx":
			// Claude Desktop: the mcp-remote stdio bridge, header "Name:value"
			// with the value from env.
			i := strings.Index(strings.Join(remote.Args, "\x00"), "mcp-remote")
			if i < 0 || len(remote.Args) < 5 {
				t.Fatalf("%s: npx entry is not an mcp-remote bridge: %v", file, remote.Args)
			}
			url := remote.Args[2]
			name, value, _ := strings.Cut(remote.Args[4], ":")
			if remote.Args[3] != "--header" || name != "Authorization" {
				t.Fatalf("%s: mcp-remote args %v: want URL --header Authorization:…", file, remote.Args)
			}
			env := map[string]string{}
			for k, v := range remote.Env {
				env[k] = strings.ReplaceAll(v, "<your cursus token>", clientToken)
			}
			remotes = append(remotes, remoteClient{file, url, expand(value, env)})
		default:
			t.Fatalf("%s: mcpServers.cursus is neither remote nor an mcp-remote bridge", file)
		}
		if local, ok := cfg.MCPServers["cursus-local"]; ok {
			locals[file] = local
		}
	}
	script := string(readRepoFile(t, "deploy/clients/claude-code.sh"))
	m := regexp.MustCompile(`(?m)^claude mcp add --transport http cursus (\S+) --header "Authorization: (Bearer \$\{CURSUS_TOKEN\})"$`).FindStringSubmatch(script)
	if m == nil {
		t.Fatal(`claude-code.sh has no "claude mcp add --transport http cursus URL --header \"Authorization: Bearer ${CURSUS_TOKEN}\"" line`)
	}
	remotes = append(remotes, remoteClient{"claude-code.sh", m[1], expand(m[2], tokenEnv)})
	return remotes, locals
}

const initializeRequest = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"deploy-test","version":"0"}}}`

// serverName returns serverInfo.name from an initialize response given as
// JSON or as an SSE stream.
func serverName(t *testing.T, body []byte) string {
	t.Helper()
	text := string(body)
	for _, line := range strings.Split(text, "\n") {
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			text = data
			break
		}
	}
	var resp struct {
		Result struct {
			ServerInfo struct {
				Name string `json:"name"`
			} `json:"serverInfo"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(text), &resp); err != nil {
		t.Fatalf("initialize response is not JSON-RPC: %v\n%s", err, body)
	}
	return resp.Result.ServerInfo.Name
}

// TestClientConfigsReachTheServer connects with what each client config
// says (URL path, Authorization header with the token variable filled in)
// to a real server with token auth, and runs each local stdio entry.
func TestClientConfigsReachTheServer(t *testing.T) {
	remotes, locals := loadClientConfigs(t)
	base := startServer(t, "listen:\n  addr: 127.0.0.1:0\nauth:\n  tokens_file: $DIR/tokens\n",
		map[string]string{"tokens": clientToken + " agent read\n"})

	post := func(url, authorization string) (int, []byte) {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(initializeRequest))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if authorization != "" {
			req.Header.Set("Authorization", authorization)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, body
	}
	if status, _ := post(base+"/mcp", ""); status != http.StatusUnauthorized {
		t.Fatalf("initialize without a token: status %d, want 401 (auth is not on, the test proves nothing)", status)
	}
	for _, c := range remotes {
		t.Run(c.name, func(t *testing.T) {
			if c.url != clientExampleURL {
				t.Errorf("URL %q, want %q (the chart's ingress host + /mcp)", c.url, clientExampleURL)
			}
			status, body := post(strings.Replace(c.url, "https://cursus.example.com", base, 1), c.authorization)
			if status != http.StatusOK {
				t.Fatalf("initialize with %q: status %d\n%s", c.authorization, status, body)
			}
			if name := serverName(t, body); name != "cursus" {
				t.Errorf("serverInfo.name %q, want cursus", name)
			}
		})
	}
	if len(locals) == 0 {
		t.Fatal("no cursus-local entries")
	}
	for file, local := range locals {
		t.Run(file+" local", func(t *testing.T) {
			if local.Command != "cursus" || len(local.Args) < 2 || local.Args[0] != "mcp" || local.Args[1] != "serve" {
				t.Fatalf("cursus-local runs %s %v, want cursus mcp serve …", local.Command, local.Args)
			}
			args := append([]string(nil), local.Args...)
			for i := 1; i < len(args); i++ {
				if args[i-1] == "--workspace-root" {
					args[i] = t.TempDir() // stands for /path/to/your/project, ${workspaceFolder}, .
				}
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			cmd := exec.CommandContext(ctx, cursusBinary(t), args...)
			cmd.Stdin = strings.NewReader(initializeRequest + "\n")
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() {
				cancel()
				_ = cmd.Wait()
			}()
			line, err := bufio.NewReader(stdout).ReadBytes('\n')
			if err != nil {
				t.Fatalf("no response on stdout: %v", err)
			}
			if name := serverName(t, line); name != "cursus" {
				t.Errorf("serverInfo.name %q, want cursus", name)
			}
		})
	}
}
