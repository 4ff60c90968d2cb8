package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cursus-dev/cursus/engine/sagemaker/sagemakertest"
)

// readmeAddr is the address the README's first-pipeline commands call: the
// server that section starts (on 8081, beside the first screen's on 8080).
const readmeAddr = "localhost:8081"

// readmeCurlBlock is the ```sh block of README.md's "A first pipeline"
// section that calls the server with curl.
func readmeCurlBlock(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## A first pipeline\n")
	if !ok {
		t.Fatal(`README.md has no "## A first pipeline" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	for rest := section; ; {
		_, after, ok := strings.Cut(rest, "```sh\n")
		if !ok {
			break
		}
		block, tail, _ := strings.Cut(after, "```")
		if strings.Contains(block, "curl -s "+readmeAddr+"/call/") {
			return block
		}
		rest = tail
	}
	t.Fatal(`"A first pipeline" has no sh block of curl calls`)
	return ""
}

// shellToken is a word of a command, or (op) one of the operators
// |, $( and ) outside quotes.
type shellToken struct {
	text string
	op   bool
}

var shellName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*`)

// nextCommand lexes the command starting at src[pos] the way sh does,
// for the subset the README uses: '…' is literal, "…" and bare words
// expand $NAME and ${NAME} from vars, a backslash-newline continues the
// line, # starts a comment. It returns the tokens and where the next
// command starts; no tokens means the input is done.
func nextCommand(src string, pos int, vars map[string]string) ([]shellToken, int, error) {
	var tokens []shellToken
	var word strings.Builder
	inWord := false
	flush := func() {
		if inWord {
			tokens = append(tokens, shellToken{text: word.String()})
			word.Reset()
			inWord = false
		}
	}
	expand := func(i int) (int, error) { // src[i] == '$'
		rest := src[i+1:]
		if strings.HasPrefix(rest, "{") {
			name, _, ok := strings.Cut(rest[1:], "}")
			if !ok || !shellName.MatchString(name) {
				return 0, fmt.Errorf("bad ${…} at %d", i)
			}
			v, ok := vars[name]
			if !ok {
				return 0, fmt.Errorf("$%s is not set", name)
			}
			word.WriteString(v)
			return i + 3 + len(name), nil
		}
		name := shellName.FindString(rest)
		if name == "" {
			return 0, fmt.Errorf("bare $ at %d", i)
		}
		v, ok := vars[name]
		if !ok {
			return 0, fmt.Errorf("$%s is not set", name)
		}
		word.WriteString(v)
		return i + 1 + len(name), nil
	}
	for i := pos; i < len(src); {
		c := src[i]
		switch {
		case c == '\n':
			flush()
			if len(tokens) > 0 {
				return tokens, i + 1, nil
			}
			i++
		case c == ' ' || c == '\t':
			flush()
			i++
		case c == '\\' && i+1 < len(src) && src[i+1] == '\n':
			flush()
			i += 2
		case c == '#' && !inWord:
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case c == '|' || c == ')':
			flush()
			tokens = append(tokens, shellToken{text: string(c), op: true})
			i++
		case c == '$' && i+1 < len(src) && src[i+1] == '(':
			flush()
			tokens = append(tokens, shellToken{text: "$(", op: true})
			i += 2
		case c == '$':
			inWord = true
			next, err := expand(i)
			if err != nil {
				return nil, 0, err
			}
			i = next
		case c == '\'':
			end := strings.IndexByte(src[i+1:], '\'')
			if end < 0 {
				return nil, 0, fmt.Errorf("unterminated ' at %d", i)
			}
			inWord = true
			word.WriteString(src[i+1 : i+1+end])
			i += end + 2
		case c == '"':
			inWord = true
			for i++; i < len(src) && src[i] != '"'; {
				switch {
				case src[i] == '\\' && i+1 < len(src) && strings.IndexByte(`"\$`, src[i+1]) >= 0:
					word.WriteByte(src[i+1])
					i += 2
				case src[i] == '$':
					next, err := expand(i)
					if err != nil {
						return nil, 0, err
					}
					i = next
				default:
					word.WriteByte(src[i])
					i++
				}
			}
			if i >= len(src) {
				return nil, 0, fmt.Errorf("unterminated \" after %d", pos)
			}
			i++
		default:
			inWord = true
			word.WriteByte(c)
			i++
		}
	}
	flush()
	return tokens, len(src), nil
}

// readmeCall is one command of the block: `[NAME=$(]curl -s <addr>/call/
// <tool> -d <body> [| jq [-c|-r] <filter>][)]`.
type readmeCall struct {
	assign, tool, body, filter string
	raw                        bool
}

// parseReadmeCall refuses any other shape, so the README cannot use shell
// this test does not replay.
func parseReadmeCall(tokens []shellToken) (readmeCall, error) {
	var c readmeCall
	isOp := func(i int, op string) bool { return i < len(tokens) && tokens[i].op && tokens[i].text == op }
	if len(tokens) >= 2 && !tokens[0].op && isOp(1, "$(") {
		name, ok := strings.CutSuffix(tokens[0].text, "=")
		if !ok || !shellName.MatchString(name) || !isOp(len(tokens)-1, ")") {
			return c, fmt.Errorf("not NAME=$(…): %v", tokens)
		}
		c.assign, tokens = name, tokens[2:len(tokens)-1]
	}
	if len(tokens) < 5 || tokens[0].text != "curl" || tokens[1].text != "-s" || tokens[3].text != "-d" {
		return c, fmt.Errorf("not curl -s URL -d BODY: %v", tokens)
	}
	tool, ok := strings.CutPrefix(tokens[2].text, readmeAddr+"/call/")
	if !ok {
		return c, fmt.Errorf("curl of %q, not %s/call/<tool>", tokens[2].text, readmeAddr)
	}
	c.tool, c.body = tool, tokens[4].text
	rest := tokens[5:]
	if len(rest) == 0 {
		return c, nil
	}
	if len(rest) < 3 || !rest[0].op || rest[0].text != "|" || rest[1].text != "jq" {
		return c, fmt.Errorf("after the curl, only | jq [-c|-r] FILTER: %v", rest)
	}
	for _, flag := range rest[2 : len(rest)-1] {
		switch flag.text {
		case "-c":
		case "-r":
			c.raw = true
		default:
			return c, fmt.Errorf("jq flag %q", flag.text)
		}
	}
	c.filter = rest[len(rest)-1].text
	return c, nil
}

var jqStep = regexp.MustCompile(`^(?:\.([A-Za-z_][A-Za-z0-9_]*)|\[([0-9]+)\])`)

// jqPath applies a jq path filter (., .a.b, .a[0].b) to v.
func jqPath(filter string, v any) (any, error) {
	if !strings.HasPrefix(filter, ".") {
		return nil, fmt.Errorf("jq filter %q is not a path", filter)
	}
	for rest := strings.TrimPrefix(filter, "."); rest != ""; {
		if !strings.HasPrefix(rest, ".") && !strings.HasPrefix(rest, "[") {
			rest = "." + rest
		}
		m := jqStep.FindStringSubmatch(rest)
		if m == nil {
			return nil, fmt.Errorf("jq filter %q: only .name and [n] steps are replayed", filter)
		}
		rest = rest[len(m[0]):]
		if m[1] != "" {
			obj, _ := v.(map[string]any)
			v = obj[m[1]]
			continue
		}
		n, _ := strconv.Atoi(m[2])
		if arr, _ := v.([]any); n < len(arr) {
			v = arr[n]
		} else {
			v = nil
		}
	}
	return v, nil
}

// TestReadmeFirstPipelineReplays runs the README's curl block, command by
// command, over real HTTP against the default (read-only) server on an
// empty workspace: every body is what the shell would send, every call is
// ok, every jq filter finds a value, the block goes from a recommendation
// to a compiled definition that validates, and the workspace is unchanged.
func TestReadmeFirstPipelineReplays(t *testing.T) {
	block := readmeCurlBlock(t)
	env := newTestEnv(t, nil)
	before := treeHash(t, env.cfg.Workspace.Root)

	vars := map[string]string{}
	var tools []string
	var last map[string]any
	for pos, n := 0, 1; ; n++ {
		tokens, next, err := nextCommand(block, pos, vars)
		if err != nil {
			t.Fatalf("README command %d: %v", n, err)
		}
		if len(tokens) == 0 {
			break
		}
		pos = next
		c, err := parseReadmeCall(tokens)
		if err != nil {
			t.Fatalf("README command %d: %v", n, err)
		}
		resp, err := http.Post(env.ts.URL+"/call/"+c.tool, "application/x-www-form-urlencoded", strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		var envl map[string]any
		if err := json.Unmarshal(body, &envl); err != nil || envl["ok"] != true {
			t.Fatalf("README command %d (%s) failed: %s\nbody sent: %s", n, c.tool, body, c.body)
		}
		tools, last = append(tools, c.tool), envl
		if c.filter == "" {
			continue
		}
		v, err := jqPath(c.filter, envl)
		if err != nil {
			t.Fatalf("README command %d: %v", n, err)
		}
		if v == nil {
			t.Fatalf("README command %d (%s): jq %s prints null", n, c.tool, c.filter)
		}
		if c.assign == "" {
			continue
		}
		if s, ok := v.(string); ok && c.raw {
			vars[c.assign] = s
			continue
		}
		b, _ := json.Marshal(v)
		vars[c.assign] = string(b)
	}

	want := []string{"pipeline_catalog.recommend", "pipeline_catalog.load_dag", "config.requirements", "config.merge_save", "compile.with_report"}
	if strings.Join(tools, " ") != strings.Join(want, " ") {
		t.Fatalf("the README calls %v, want %v", tools, want)
	}
	if after := treeHash(t, env.cfg.Workspace.Root); after != before {
		t.Errorf("the workspace changed: %s → %s", before, after)
	}
	def, err := json.Marshal(last["data"].(map[string]any)["definition"])
	if err != nil {
		t.Fatal(err)
	}
	sagemakertest.MustValidate(t, def)
	// The definition has real code: the built-in code of every step, each
	// content-addressed and named by the definition; nothing is missing.
	manifest, _ := last["data"].(map[string]any)["manifest"].(map[string]any)
	if len(manifest) == 0 {
		t.Fatal("the compile has no code artifacts")
	}
	for local, uri := range manifest {
		if !strings.HasPrefix(local, "builtin:") && !strings.HasPrefix(local, "generated:") {
			t.Errorf("manifest entry %s is not built-in code", local)
		}
		if u, _ := uri.(string); !bytes.Contains(def, []byte(u)) {
			t.Errorf("the definition does not name %s (%v)", local, uri)
		}
	}
	if bytes.Contains(def, []byte("/code/missing/")) {
		t.Error("the definition names a code/missing placeholder")
	}
	warnings, _ := last["warnings"].([]any)
	for _, w := range warnings {
		if ws := fmt.Sprint(w); strings.Contains(ws, "not found") || strings.Contains(ws, "built-in code") {
			t.Errorf("warning about code: %s", ws)
		}
	}
	// The shared DAG names the pipeline (load_dag's metadata.name).
	if name, _ := last["data"].(map[string]any)["pipeline_name"].(string); !strings.Contains(name, "xgboost-simple-training") {
		t.Errorf("pipeline name %q does not name the shared DAG", name)
	}
}

// TestReadmeFirstPipelineRunsInBash runs the same block with bash, curl
// and jq themselves, where they are installed, against the test server:
// the replay above reads the shell as the shell does.
func TestReadmeFirstPipelineRunsInBash(t *testing.T) {
	for _, tool := range []string{"bash", "curl", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	block := readmeCurlBlock(t)
	env := newTestEnv(t, nil)
	u, err := url.Parse(env.ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", strings.ReplaceAll(block, readmeAddr, u.Host))
	cmd.Dir = t.TempDir()
	// Loopback only, whatever proxy the environment names.
	cmd.Env = append(os.Environ(), "NO_PROXY=*", "no_proxy=*")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("bash: %v\n%s", err, stderr.String())
	}
	// The last command prints the definition, after the other outputs.
	dec := json.NewDecoder(bytes.NewReader(out))
	var doc json.RawMessage
	for dec.More() {
		if err := dec.Decode(&doc); err != nil {
			t.Fatalf("output is not a JSON stream: %v\n%s", err, out)
		}
	}
	if !bytes.Contains(doc, []byte(`"Steps"`)) {
		t.Fatalf("the last output is not a pipeline definition: %s", doc)
	}
	sagemakertest.MustValidate(t, doc)
}

// readmeBlock is one fenced code block of README.md: its info string
// (sh, json, …), its text and its byte offset in the file.
type readmeBlock struct {
	lang, text string
	at         int
}

// readmeDoc is README.md's text and its fenced code blocks (indented
// fences, inside list items, included).
func readmeDoc(t *testing.T) (string, []readmeBlock) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	var blocks []readmeBlock
	var cur *readmeBlock
	var body strings.Builder
	at := 0
	for _, line := range strings.SplitAfter(doc, "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case cur == nil && strings.HasPrefix(trimmed, "```"):
			cur = &readmeBlock{lang: strings.TrimPrefix(trimmed, "```"), at: at + len(line)}
			body.Reset()
		case cur != nil && trimmed == "```":
			cur.text = body.String()
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil:
			body.WriteString(line)
		}
		at += len(line)
	}
	if cur != nil {
		t.Fatal("README.md has an unclosed code block")
	}
	return doc, blocks
}

// TestReadmeOpensWithTheTwoCommands: the README's first block is the two
// commands, the second of which is exactly what CI runs (.ci/run execs
// it); the README names every Debian package the test command installs,
// and the test command installs no package that brings a service it does
// not need (Debian's prometheus: promtool is unpacked from it instead).
func TestReadmeOpensWithTheTwoCommands(t *testing.T) {
	doc, blocks := readmeDoc(t)
	if len(blocks) == 0 || blocks[0].lang != "sh" {
		t.Fatal("README.md does not open with a sh block")
	}
	var cmds []string
	for _, l := range strings.Split(strings.TrimSpace(blocks[0].text), "\n") {
		cmd, _, _ := strings.Cut(l, "#")
		cmds = append(cmds, strings.TrimSpace(cmd))
	}
	if strings.Join(cmds, "\n") != "go run ./cmd/cursus serve\n./scripts/test.sh" {
		t.Fatalf("README's first block is %q, want the serve and test commands", cmds)
	}
	ci, err := os.ReadFile(filepath.Join("..", ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^exec \./scripts/test\.sh$`).Match(ci) {
		t.Errorf(".ci/run does not run ./scripts/test.sh:\n%s", ci)
	}
	script, err := os.ReadFile(filepath.Join("..", "scripts", "test.sh"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^debian_pkgs=\(([^)]*)\)`).FindSubmatch(script)
	if m == nil {
		t.Fatal("scripts/test.sh has no debian_pkgs=(…) list")
	}
	pkgs := strings.Fields(string(m[1]))
	if len(pkgs) == 0 {
		t.Fatal("scripts/test.sh's debian_pkgs is empty")
	}
	for _, p := range append(pkgs, "promtool", "staticcheck", "helm", "as root", "~/.cache/cursus-tools") {
		if !strings.Contains(doc, "`"+p+"`") && !strings.Contains(doc, p) {
			t.Errorf("README.md does not say that the test command installs %s", p)
		}
	}
	if regexp.MustCompile(`apt-get install[^\n]*prometheus`).Match(script) {
		t.Error("scripts/test.sh installs Debian's prometheus package, which sets up and starts a service")
	}
	for _, p := range pkgs {
		if !strings.Contains(doc, "`"+p+"`") {
			t.Errorf("README.md does not name the package `%s` that scripts/test.sh installs", p)
		}
	}
}

// TestReadmeRelativeLinksResolve: every link of README.md that is not a
// URL names a file of the repository or a heading of the README.
func TestReadmeRelativeLinksResolve(t *testing.T) {
	doc, _ := readmeDoc(t)
	slugs := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^#{1,6} (.+)$`).FindAllStringSubmatch(doc, -1) {
		slug := strings.ToLower(strings.TrimSpace(m[1]))
		slug = regexp.MustCompile("[^a-z0-9 _-]").ReplaceAllString(slug, "")
		slugs[strings.ReplaceAll(slug, " ", "-")] = true
	}
	links := regexp.MustCompile(`\]\(([^)\s]+)\)`).FindAllStringSubmatch(doc, -1)
	checked := 0
	for _, m := range links {
		target := m[1]
		if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
			continue
		}
		checked++
		file, anchor, _ := strings.Cut(target, "#")
		if file == "" {
			if !slugs[anchor] {
				t.Errorf("link %s: README.md has no heading with that anchor", target)
			}
			continue
		}
		if _, err := os.Stat(filepath.Join("..", filepath.FromSlash(file))); err != nil {
			t.Errorf("link %s: %v", target, err)
		}
	}
	if checked == 0 {
		t.Fatal("README.md has no relative links to check")
	}
	if !strings.Contains(doc, "](docs/ARCHITECTURE.md)") {
		t.Error("README.md does not link docs/ARCHITECTURE.md")
	}
}

// TestReadmeServersUseDistinctPorts: each server the README starts (`cursus
// serve`, `go run ./cmd/cursus serve`, `docker run -p`) listens on a port
// of its own, so following the README never meets "address already in
// use", and every loopback URL it calls is one of those ports.
func TestReadmeServersUseDistinctPorts(t *testing.T) {
	_, blocks := readmeDoc(t)
	serve := regexp.MustCompile(`(?:^|[\s;&|(/])cursus serve\b([^\n#]*)`)
	addr := regexp.MustCompile(`--addr[ =](\S+)`)
	publish := regexp.MustCompile(`docker run\b[^\n]*?\s-p\s+(?:[\d.]+:)?(\d+):\d+`)
	served := map[string]string{}
	listen := func(port, where string) {
		if prev, ok := served[port]; ok {
			t.Errorf("port %s: %q and %q both listen on it", port, prev, where)
		}
		served[port] = where
	}
	for _, b := range blocks {
		if b.lang != "sh" && b.lang != "bash" {
			continue
		}
		for _, line := range strings.Split(b.text, "\n") {
			for _, m := range serve.FindAllStringSubmatch(line, -1) {
				port := "8080" // listen.addr's default
				if a := addr.FindStringSubmatch(m[1]); a != nil {
					_, p, err := net.SplitHostPort(a[1])
					if err != nil {
						t.Fatalf("%q: %v", line, err)
					}
					port = p
				}
				listen(port, strings.TrimSpace(line))
			}
			if m := publish.FindStringSubmatch(line); m != nil {
				listen(m[1], strings.TrimSpace(line))
			}
		}
	}
	if len(served) < 2 {
		t.Fatalf("found %d servers in README.md's sh blocks: %v", len(served), served)
	}
	loopback := regexp.MustCompile(`(?:127\.0\.0\.1|localhost):(\d+)`)
	for _, b := range blocks {
		for _, m := range loopback.FindAllStringSubmatch(b.text, -1) {
			if _, ok := served[m[1]]; !ok {
				t.Errorf("README.md calls %s, a port no server of the README listens on (%v)", m[0], served)
			}
		}
	}
}

// TestReadmeFiguresAreGenerated: every size figure in README.md ("… KB")
// stands between the markers scripts/tool-sizes.sh rewrites, and each
// answer-size figure is the default size docs/TOOLS.md measured for that
// answer (TestReadmeToolFiguresMatchDocs holds the tool-list figures).
func TestReadmeFiguresAreGenerated(t *testing.T) {
	doc, _ := readmeDoc(t)
	tools, err := os.ReadFile(filepath.Join("..", "docs", "TOOLS.md"))
	if err != nil {
		t.Fatal(err)
	}
	// The rows of docs/TOOLS.md's first-answers table, by the answer's
	// name in scripts/toolsizes/measure.mjs.
	labels := map[string]string{"rest_tools": "`GET /tools`", "tools_help": "`tools.help {}`", "config_requirements": "`config.requirements` (12 nodes)"}
	marker := regexp.MustCompile(`<!-- answer-size:([a-z_]+) -->(.*?)<!-- /answer-size -->`)
	found := marker.FindAllStringSubmatch(doc, -1)
	if len(found) == 0 {
		t.Fatal("README.md has no answer-size figures")
	}
	for _, m := range found {
		label, ok := labels[m[1]]
		if !ok {
			t.Errorf("answer-size:%s: docs/TOOLS.md measures no such answer", m[1])
			continue
		}
		row := regexp.MustCompile(`(?m)^\| ` + regexp.QuoteMeta(label) + ` \| (\d+) \| ([\d.]+) \|`).FindStringSubmatch(string(tools))
		if row == nil {
			t.Fatalf("docs/TOOLS.md has no %s row", label)
		}
		if want := "about " + row[2] + " KB"; m[2] != want {
			t.Errorf("README.md says %q for %s, docs/TOOLS.md %q (run scripts/tool-sizes.sh)", m[2], m[1], want)
		}
	}
	rest := marker.ReplaceAllString(doc, "")
	rest = regexp.MustCompile(`(?s)<!-- tool-sizes -->.*?<!-- /tool-sizes -->`).ReplaceAllString(rest, "")
	if typed := regexp.MustCompile(`\d[\d.,]* ?KB\b`).FindAllString(rest, -1); len(typed) > 0 {
		t.Errorf("README.md has size figures outside the generated markers: %q", typed)
	}
}

// TestReadmeClientSnippetsReachTheServer: every remote client snippet of
// README.md (a config's url, the mcp-remote bridge's URL, `claude mcp add
// --transport http`) names the first screen's MCP endpoint, and an MCP
// initialize sent there, to a default server, is answered by cursus; VS
// Code's snippet uses its own shape (servers, a type per entry).
func TestReadmeClientSnippetsReachTheServer(t *testing.T) {
	doc, blocks := readmeDoc(t)
	var urls []string
	vscode := false
	for _, b := range blocks {
		if b.lang != "json" {
			continue
		}
		var cfg struct {
			MCPServers map[string]mcpSnippet `json:"mcpServers"`
			Servers    map[string]mcpSnippet `json:"servers"`
		}
		if err := json.Unmarshal([]byte(b.text), &cfg); err != nil || (cfg.MCPServers == nil && cfg.Servers == nil) {
			continue
		}
		entries := cfg.MCPServers
		if cfg.Servers != nil {
			vscode = true
			entries = cfg.Servers
			for name, e := range entries {
				if (e.URL != "" && e.Type != "http") || (e.Command != "" && e.Type != "stdio") {
					t.Errorf("VS Code entry %s: type %q does not match its transport", name, e.Type)
				}
			}
		}
		for name, e := range entries {
			switch {
			case e.URL != "":
				urls = append(urls, e.URL)
			case e.Command == "npx":
				i := slices.Index(e.Args, "mcp-remote")
				if i < 0 || i+1 >= len(e.Args) {
					t.Errorf("entry %s: npx without mcp-remote URL: %v", name, e.Args)
					continue
				}
				urls = append(urls, e.Args[i+1])
			case e.Command == "cursus":
			default:
				t.Errorf("entry %s runs %q", name, e.Command)
			}
		}
	}
	for _, m := range regexp.MustCompile(`claude mcp add --transport http \S+ (\S+)`).FindAllStringSubmatch(doc, -1) {
		urls = append(urls, m[1])
	}
	if !vscode || len(urls) < 4 {
		t.Fatalf("README.md has %d remote client snippets (VS Code's: %v)", len(urls), vscode)
	}
	env := newTestEnv(t, nil)
	for _, u := range urls {
		parsed, err := url.Parse(u)
		if err != nil || parsed.Port() != "8080" || (parsed.Hostname() != "127.0.0.1" && parsed.Hostname() != "localhost") || parsed.Path != "/mcp" {
			t.Errorf("snippet URL %s is not the first screen's MCP endpoint (http://127.0.0.1:8080/mcp)", u)
			continue
		}
		req, _ := http.NewRequest(http.MethodPost, env.ts.URL+parsed.Path, strings.NewReader(initializeBody))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !bytes.Contains(body, []byte(`"name":"cursus"`)) {
			t.Errorf("initialize at %s: %d %s", u, resp.StatusCode, body)
		}
	}
}

// mcpSnippet is one server entry of a client configuration.
type mcpSnippet struct {
	Type    string   `json:"type"`
	URL     string   `json:"url"`
	Command string   `json:"command"`
	Args    []string `json:"args"`
}
