package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	mcpclient "github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// Operation kinds, in report order.
const (
	opInitialize = "initialize"
	opList       = "tools/list"
	opCall       = "tools/call"
	opClose      = "close"
	opREST       = "rest /call"
)

var opOrder = []string{opInitialize, opList, opCall, opClose, opREST}

// Error classes. A transport error is one where no HTTP answer arrived
// (refused, reset, timeout); a status error is an HTTP answer other than
// success (e.g. 429 from the rate limit); an rpc error is a JSON-RPC error
// object; a tool error is an envelope with ok=false.
const (
	errTransport = "transport"
	errRPC       = "rpc"
	errTool      = "tool_error"
)

// loopbackBase accepts only http URLs on a loopback address and returns the
// base URL without a trailing slash.
func loopbackBase(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("-url: %w", err)
	}
	if u.Scheme != "http" {
		return "", fmt.Errorf("-url %q: only http:// is supported", raw)
	}
	host := u.Hostname()
	ip := net.ParseIP(host)
	if host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return "", fmt.Errorf("-url %q: refusing a non-loopback address; load may only target this machine (127.0.0.0/8, ::1, localhost)", raw)
	}
	if u.RawQuery != "" || u.Fragment != "" || (u.Path != "" && u.Path != "/") {
		return "", fmt.Errorf("-url %q: give the server's base URL (scheme://host:port)", raw)
	}
	return u.Scheme + "://" + u.Host, nil
}

func decodeArgs(raw string) (map[string]any, error) {
	var m map[string]any
	if err := json.Unmarshal([]byte(raw), &m); err != nil || m == nil {
		return nil, fmt.Errorf("must be a JSON object: %q", raw)
	}
	return m, nil
}

// results are the merged measurements of all clients.
type results struct {
	latencies map[string][]time.Duration // successful operations by kind
	errors    map[string]int64           // by class, e.g. "transport", "http 429"
	sessions  int64
}

func (r *results) merge(o *results) {
	for k, v := range o.latencies {
		r.latencies[k] = append(r.latencies[k], v...)
	}
	for k, v := range o.errors {
		r.errors[k] += v
	}
	r.sessions += o.sessions
}

func newResults() *results {
	return &results{latencies: map[string][]time.Duration{}, errors: map[string]int64{}}
}

// worker is one client. Its measurements are private until the end.
type worker struct {
	o      options
	hc     *http.Client
	budget *atomic.Int64
	args   map[string]any
	body   []byte
	res    *results
}

// take reserves one operation of the run's budget.
func (w *worker) take() bool { return w.budget.Add(-1) >= 0 }

// record files one finished operation. An operation cut short because the
// run ended is neither a success nor an error.
func (w *worker) record(ctx context.Context, kind string, d time.Duration, class string) {
	if class == "" {
		w.res.latencies[kind] = append(w.res.latencies[kind], d)
		return
	}
	if ctx.Err() != nil {
		return
	}
	w.res.errors[class]++
}

// drive runs the clients until the deadline or the budget runs out.
func drive(ctx context.Context, o options) (*results, error) {
	ctx, cancel := context.WithTimeout(ctx, o.duration)
	defer cancel()
	tr := &http.Transport{
		MaxIdleConns:        o.clients * 2,
		MaxIdleConnsPerHost: o.clients * 2,
		IdleConnTimeout:     30 * time.Second,
		DisableCompression:  true,
	}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr, Timeout: o.timeout}
	args, _ := decodeArgs(o.args)
	var budget atomic.Int64
	budget.Store(o.requests)
	var wg sync.WaitGroup
	workers := make([]*worker, o.clients)
	for i := range workers {
		w := &worker{o: o, hc: hc, budget: &budget, args: args, body: []byte(o.args), res: newResults()}
		workers[i] = w
		loop := w.loopFor(i)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil && budget.Load() > 0 {
				loop(ctx)
			}
		}()
	}
	wg.Wait()
	total := newResults()
	for _, w := range workers {
		total.merge(w.res)
	}
	return total, nil
}

// loopFor picks client i's behaviour; mix splits the clients 2:1:1 between
// agent sessions, REST loops and churn.
func (w *worker) loopFor(i int) func(context.Context) {
	mode := w.o.mode
	if mode == "mix" {
		mode = [...]string{"sessions", "rest", "sessions", "churn"}[i%4]
	}
	switch mode {
	case "rest":
		return w.restCall
	case "churn":
		return func(ctx context.Context) { w.session(ctx, 0) }
	default:
		return func(ctx context.Context) { w.session(ctx, w.o.calls) }
	}
}

func (w *worker) restCall(ctx context.Context) {
	if !w.take() {
		return
	}
	start := time.Now()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.o.url+"/call/"+url.PathEscape(w.o.tool), bytes.NewReader(w.body))
	if err != nil {
		w.record(ctx, opREST, 0, errTransport)
		return
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := w.hc.Do(req)
	if err != nil {
		w.record(ctx, opREST, 0, errTransport)
		return
	}
	var env struct {
		OK bool `json:"ok"`
	}
	decodeErr := json.NewDecoder(resp.Body).Decode(&env)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	d := time.Since(start)
	switch {
	case resp.StatusCode != http.StatusOK:
		w.record(ctx, opREST, d, fmt.Sprintf("http %d", resp.StatusCode))
	case decodeErr != nil:
		w.record(ctx, opREST, d, errTransport)
	case !env.OK:
		w.record(ctx, opREST, d, errTool)
	default:
		w.record(ctx, opREST, d, "")
	}
}

// session is one agent: initialize, tools/list, calls × tools/call, close.
// With calls = 0 it is session churn: initialize and close only.
func (w *worker) session(ctx context.Context, calls int) {
	if !w.take() {
		return
	}
	tr, err := transport.NewStreamableHTTP(w.o.url+"/mcp", transport.WithHTTPBasicClient(w.hc))
	if err != nil {
		w.record(ctx, opInitialize, 0, errTransport)
		return
	}
	c := mcpclient.NewClient(tr, mcpclient.WithProtocolVersion(w.o.protocol))
	start := time.Now()
	if err := c.Start(ctx); err != nil {
		w.record(ctx, opInitialize, 0, classify(err))
		return
	}
	_, err = c.Initialize(ctx, mcp.InitializeRequest{Params: mcp.InitializeParams{
		ProtocolVersion: w.o.protocol,
		ClientInfo:      mcp.Implementation{Name: "cursus-loadtest", Version: "1"},
	}})
	w.record(ctx, opInitialize, time.Since(start), classify(err))
	w.res.sessions++
	// Always close, even once the budget is spent, so no session leaks;
	// the close is measured but not counted against the budget.
	defer func() {
		start := time.Now()
		err := c.Close()
		w.record(ctx, opClose, time.Since(start), classify(err))
	}()
	if err != nil || calls == 0 {
		return
	}
	if !w.take() {
		return
	}
	start = time.Now()
	_, err = c.ListTools(ctx, mcp.ListToolsRequest{})
	w.record(ctx, opList, time.Since(start), classify(err))
	for i := 0; i < calls && ctx.Err() == nil && w.take(); i++ {
		start = time.Now()
		res, err := c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: w.o.tool, Arguments: w.args}})
		class := classify(err)
		if class == "" && res.IsError {
			class = errTool
		}
		w.record(ctx, opCall, time.Since(start), class)
	}
}

var statusPattern = regexp.MustCompile(`status (\d{3})`)

// classify names the error class of an MCP client error ("" for none).
func classify(err error) string {
	if err == nil {
		return ""
	}
	var te *transport.Error
	if errors.As(err, &te) {
		// mcp-go reports an HTTP answer other than 200/202 as a transport
		// error with the status in the text.
		if m := statusPattern.FindStringSubmatch(err.Error()); m != nil && !strings.Contains(err.Error(), "connection") {
			return "http " + m[1]
		}
		return errTransport
	}
	return errRPC
}
