package server

import (
	"net/http"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/cursus-dev/cursus"
	"github.com/cursus-dev/cursus/registry"
)

// metrics are one server's Prometheus collectors, on a registry of its own
// so two servers in one process (tests) never share counts.
type metrics struct {
	registry *prometheus.Registry

	toolCalls      *prometheus.CounterVec
	toolDuration   *prometheus.HistogramVec
	toolInFlight   *prometheus.GaugeVec
	gateRejections *prometheus.CounterVec
	httpRequests   *prometheus.CounterVec
	httpDuration   *prometheus.HistogramVec
	mcpSessions    prometheus.Gauge
	rateLimited    *prometheus.CounterVec
	authFailures   *prometheus.CounterVec
	// rateStoreErrors counts calls whose shared rate limit store
	// (limits.shared_store) failed; they were limited per replica.
	rateStoreErrors prometheus.Counter

	// Children of the vectors above, resolved on first use per label set
	// (so no series appears before it is observed) and then reused, so a
	// call does not hash its labels again on every observation.
	inFlightChildren childCache[toolKey, prometheus.Gauge]
	okCallChildren   childCache[toolKey, prometheus.Counter]
	durationChildren childCache[toolKey, prometheus.Observer]
	httpChildren     childCache[httpKey, *httpObservers]
}

// childCache maps a label set to its resolved collector. A plain map
// under a read lock, unlike sync.Map, looks a struct key up without
// allocating.
type childCache[K comparable, V any] struct {
	mu sync.RWMutex
	m  map[K]V
}

func (c *childCache[K, V]) get(k K, resolve func() V) V {
	c.mu.RLock()
	v, ok := c.m[k]
	c.mu.RUnlock()
	if ok {
		return v
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if v, ok := c.m[k]; ok {
		return v
	}
	if c.m == nil {
		c.m = map[K]V{}
	}
	v = resolve()
	c.m[k] = v
	return v
}

type toolKey struct{ tool, transport string }

type httpKey struct {
	route, method string
	status        int
}

type httpObservers struct {
	requests prometheus.Counter
	duration prometheus.Observer
}

// codeOK is the outcome label of a successful call.
const codeOK = "ok"

// unknownTool is the tool label of a call to a name that is not registered;
// the name itself is client-controlled and would blow up cardinality.
const unknownTool = "unknown"

// watchAbandoned exports reg's abandoned calls: answered at their
// deadline, or when their caller left, while their work runs on.
func (m *metrics) watchAbandoned(reg *registry.Registry) {
	m.registry.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "cursus_tool_calls_abandoned",
			Help: "Tool calls answered at their deadline (or when their caller left) whose work still runs; each keeps its caller's share until it ends.",
		}, func() float64 { return float64(reg.Abandoned()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "cursus_tool_calls_abandoned_total",
			Help: "Tool calls answered at their deadline (or when their caller left) before their work ended.",
		}, func() float64 { return float64(reg.AbandonedTotal()) }),
	)
}

func newMetrics(state func() PodState) *metrics {
	m := &metrics{
		registry: prometheus.NewRegistry(),
		toolCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cursus_tool_calls_total",
			Help: "Tool calls by dotted tool name, transport and outcome code (ok or the envelope error code).",
		}, []string{"tool", "transport", "code"}),
		toolDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "cursus_tool_call_duration_seconds",
			Help:    "Time from a tool call entering the registry to its envelope, by tool and transport.",
			Buckets: []float64{.001, .005, .01, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300},
		}, []string{"tool", "transport"}),
		toolInFlight: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "cursus_tool_calls_in_flight",
			Help: "Tool calls currently running, by tool and transport.",
		}, []string{"tool", "transport"}),
		gateRejections: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cursus_tool_gate_rejections_total",
			Help: "Tool calls refused by a gate (tool_disabled) or for a missing scope (forbidden).",
		}, []string{"tool", "transport", "reason"}),
		httpRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cursus_http_requests_total",
			Help: "HTTP requests by route pattern, method and status code.",
		}, []string{"route", "method", "status"}),
		httpDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "cursus_http_request_duration_seconds",
			Help:    "HTTP request duration by route pattern and method (streams count until they close).",
			Buckets: prometheus.DefBuckets,
		}, []string{"route", "method"}),
		mcpSessions: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "cursus_mcp_sessions_active",
			Help: "MCP sessions currently registered (stateful streamable HTTP and legacy SSE; with limits.shared_store, legacy SSE only).",
		}),
		rateLimited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cursus_rate_limited_total",
			Help: "Requests refused with 429 by the per-caller rate limit or fair share, by transport (auth: an address over its failed logins).",
		}, []string{"transport"}),
		authFailures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cursus_auth_failures_total",
			Help: "Requests refused with 401, by reason (missing, invalid).",
		}, []string{"reason"}),
		rateStoreErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "cursus_rate_store_errors_total",
			Help: "Rate-limited calls whose shared store (limits.shared_store) could not be reached or failed; each was limited by this replica alone.",
		}),
	}
	buildInfo := buildInfo{state: state, desc: prometheus.NewDesc("cursus_build_info",
		"Always 1; the labels carry the build version, Go version, the digest of the catalogs this pod answers from and the id of the key it signs workflow run tokens with, so replicas that differ show.",
		[]string{"version", "goversion", "catalog_digest", "workflow_key_id"}, nil)}
	m.registry.MustRegister(
		m.toolCalls, m.toolDuration, m.toolInFlight, m.gateRejections,
		m.httpRequests, m.httpDuration, m.mcpSessions, m.rateLimited, m.authFailures, m.rateStoreErrors, buildInfo,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return m
}

func toolLabel(tool string) string {
	if tool == "" {
		return unknownTool
	}
	return tool
}

// The tool label is a registered name or unknownTool and the transport
// one of ours, so the tool caches stay as small as the label sets.

func (m *metrics) callStarted(tool, transport string) {
	tool = toolLabel(tool)
	m.inFlightChildren.get(toolKey{tool, transport}, func() prometheus.Gauge {
		return m.toolInFlight.WithLabelValues(tool, transport)
	}).Inc()
}

// callFinished counts a finished call. started says whether callStarted
// was called for it (the registry reports unknown tools without a start).
func (m *metrics) callFinished(tool, transport, code string, d time.Duration, started bool) {
	tool = toolLabel(tool)
	k := toolKey{tool, transport}
	if started {
		m.inFlightChildren.get(k, func() prometheus.Gauge { return m.toolInFlight.WithLabelValues(tool, transport) }).Dec()
	}
	if code == "" || code == codeOK {
		m.okCallChildren.get(k, func() prometheus.Counter { return m.toolCalls.WithLabelValues(tool, transport, codeOK) }).Inc()
	} else {
		m.toolCalls.WithLabelValues(tool, transport, code).Inc()
	}
	m.durationChildren.get(k, func() prometheus.Observer { return m.toolDuration.WithLabelValues(tool, transport) }).Observe(d.Seconds())
	if code == registry.CodeToolDisabled || code == registry.CodeForbidden {
		m.gateRejections.WithLabelValues(tool, transport, code).Inc()
	}
}

func (m *metrics) httpRequest(route, method string, status int, d time.Duration) {
	if !standardMethod(method) {
		// Clients choose the method: any other one shares one label value,
		// so they cannot create new series.
		method = otherMethod
	}
	h := m.httpChildren.get(httpKey{route, method, status}, func() *httpObservers {
		return &httpObservers{
			requests: m.httpRequests.WithLabelValues(route, method, strconv.Itoa(status)),
			duration: m.httpDuration.WithLabelValues(route, method),
		}
	})
	h.requests.Inc()
	h.duration.Observe(d.Seconds())
}

// otherMethod is the method label of a request whose method is not one of
// HTTP's standard methods.
const otherMethod = "OTHER"

func standardMethod(m string) bool {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return true
	}
	return false
}

// PodState is what one replica serves that others must agree on.
type PodState struct {
	// CatalogDigest changes with the step types and shared DAGs loaded.
	CatalogDigest string
	// WorkflowKeyID names the key run tokens are signed with.
	WorkflowKeyID string
}

// buildInfo is cursus_build_info, its labels read at each scrape: a step
// or pipeline directory reload changes the catalog digest without a
// restart.
type buildInfo struct {
	state func() PodState // nil: empty labels
	desc  *prometheus.Desc
}

func (b buildInfo) Describe(ch chan<- *prometheus.Desc) { ch <- b.desc }

func (b buildInfo) Collect(ch chan<- prometheus.Metric) {
	var st PodState
	if b.state != nil {
		st = b.state()
	}
	ch <- prometheus.MustNewConstMetric(b.desc, prometheus.GaugeValue, 1, cursus.Version, runtime.Version(), st.CatalogDigest, st.WorkflowKeyID)
}
