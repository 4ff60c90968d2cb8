package deploy

import (
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
)

// TestChartTrustedProxies: with the Ingress on and no trustedProxies the
// server trusts the private ranges an in-cluster controller runs in; a
// value wins; without the Ingress forwarding headers stay ignored.
func TestChartTrustedProxies(t *testing.T) {
	cases := []struct {
		name string
		sets []string
		want []string
	}{
		{"no ingress", nil, nil},
		{"ingress", []string{"ingress.enabled=true"}, []string{"10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7"}},
		{"set", []string{"ingress.enabled=true", "config.listen.trustedProxies={10.42.0.0/16}"}, []string{"10.42.0.0/16"}},
	}
	for _, c := range cases {
		out, err := renderChart(t, nil, c.sets...)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := renderedConfig(t, decodeStrict(t, out)).Listen.TrustedProxies; !slices.Equal(got, c.want) {
			t.Errorf("%s: listen.trusted_proxies %q, want %q", c.name, got, c.want)
		}
	}
}

// manyReplicas are values that run three pods with nothing else refused.
var manyReplicas = []string{"replicaCount=3", "workflow.key=a-shared-run-token-key", "config.mcp.legacySSE=false"}

// TestChartRefusesPerPodTransportsOnManyReplicas: legacy SSE and stateful
// sessions live in one pod; with more than one replica the chart refuses
// them unless the Service keeps each client on one pod or the pods share
// a Redis (redis.address), naming the values.
func TestChartRefusesPerPodTransportsOnManyReplicas(t *testing.T) {
	key := "workflow.key=a-shared-run-token-key"
	refused := []struct {
		sets  []string
		names []string
	}{
		{[]string{"replicaCount=2", key}, []string{"config.mcp.legacySSE (on by default)", "service.sessionAffinity=ClientIP", "redis.address", "up to 2 replicas"}},
		{[]string{"replicaCount=2", key, "config.mcp.legacySSE=false", "config.mcp.stateful=true"}, []string{"config.mcp.stateful keeps", "service.sessionAffinity=ClientIP"}},
		{[]string{"autoscaling.enabled=true", key}, []string{"config.mcp.legacySSE", "up to 10 replicas", "service.sessionAffinity=ClientIP"}},
	}
	for _, c := range refused {
		_, err := renderChart(t, nil, c.sets...)
		for _, name := range c.names {
			if err == nil || !strings.Contains(err.Error(), name) {
				t.Errorf("%v: rendered or error without %q: %v", c.sets, name, err)
			}
		}
	}
	allowed := [][]string{
		nil, // one replica, legacy SSE on
		{"replicaCount=1", "config.mcp.stateful=true"},
		{"autoscaling.enabled=true", "autoscaling.minReplicas=1", "autoscaling.maxReplicas=1"},
		{"replicaCount=2", key, "service.sessionAffinity=ClientIP", "config.mcp.stateful=true"},
		{"replicaCount=2", key, "config.mcp.legacySSE=false"},
		// The shared store serves every session and SSE stream on any pod.
		{"replicaCount=2", key, "redis.address=redis.cache:6379", "config.mcp.stateful=true"},
		{"autoscaling.enabled=true", key, "redis.address=redis.cache:6379"},
	}
	for _, sets := range allowed {
		out, err := renderChart(t, nil, sets...)
		if err != nil {
			t.Errorf("%v: %v", sets, err)
			continue
		}
		svc := decodeStrict(t, out).objects["Service"].(*corev1.Service)
		want := corev1.ServiceAffinity("None")
		if slices.Contains(sets, "service.sessionAffinity=ClientIP") {
			want = corev1.ServiceAffinityClientIP
		}
		if svc.Spec.SessionAffinity != want {
			t.Errorf("%v: Service sessionAffinity %q, want %q", sets, svc.Spec.SessionAffinity, want)
		}
	}
	if _, err := renderChart(t, nil, "service.sessionAffinity=Cookie"); err == nil || !strings.Contains(err.Error(), "sessionAffinity") {
		t.Errorf("schema accepted service.sessionAffinity=Cookie (err %v)", err)
	}
}

// TestChartWriteGatesNeedSharedWorkspace: open write gates on more than
// one replica need one ReadWriteMany workspace volume, or the render fails
// naming the values.
func TestChartWriteGatesNeedSharedWorkspace(t *testing.T) {
	gates := append(slices.Clone(manyReplicas), "config.gates.enableDestructive=true", "config.listen.allowUnauthenticatedRemote=true")
	for _, extra := range [][]string{
		nil,
		{"workspace.readWriteMany=true"},
		{"workspace.volume.emptyDir.medium=Memory", "workspace.readWriteMany=true"},
		{"workspace.volume.persistentVolumeClaim.claimName=ws"},
	} {
		_, err := renderChart(t, nil, append(slices.Clone(gates), extra...)...)
		if err == nil || !strings.Contains(err.Error(), "workspace.volume") || !strings.Contains(err.Error(), "workspace.readWriteMany=true") {
			t.Errorf("%v: rendered or error without the values to set: %v", extra, err)
		}
	}
	out, err := renderChart(t, nil, append(gates, "workspace.volume.persistentVolumeClaim.claimName=ws", "workspace.readWriteMany=true")...)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range decodeStrict(t, out).objects["Deployment"].(*appsv1.Deployment).Spec.Template.Spec.Volumes {
		if v.Name == "workspace" && (v.PersistentVolumeClaim == nil || v.PersistentVolumeClaim.ClaimName != "ws") {
			t.Errorf("workspace volume %+v, want the claim ws", v)
		}
	}
	if _, err := renderChart(t, nil, "config.gates.enableDestructive=true", "config.listen.allowUnauthenticatedRemote=true"); err != nil {
		t.Errorf("write gates on one replica: %v", err)
	}
}

// TestChartPodDisruptionBudgetAndSpread: with two or more pods the chart
// renders a PodDisruptionBudget and spreads pods over nodes and zones; one
// pod gets neither; the operator's own constraints replace the spread.
func TestChartPodDisruptionBudgetAndSpread(t *testing.T) {
	render := func(sets ...string) (*policyv1.PodDisruptionBudget, []corev1.TopologySpreadConstraint) {
		t.Helper()
		out, err := renderChart(t, nil, sets...)
		if err != nil {
			t.Fatal(err)
		}
		r := decodeStrict(t, out)
		pdb, _ := r.objects["PodDisruptionBudget"].(*policyv1.PodDisruptionBudget)
		return pdb, r.objects["Deployment"].(*appsv1.Deployment).Spec.Template.Spec.TopologySpreadConstraints
	}
	pdb, spread := render(manyReplicas...)
	if pdb == nil || pdb.Spec.MinAvailable == nil || pdb.Spec.MinAvailable.IntValue() != 1 ||
		pdb.Spec.Selector.MatchLabels["app.kubernetes.io/instance"] != releaseName {
		t.Errorf("three replicas: PodDisruptionBudget %+v, want minAvailable 1 over the release's pods", pdb)
	}
	var keys []string
	for _, c := range spread {
		keys = append(keys, c.TopologyKey)
		if c.MaxSkew != 1 || c.WhenUnsatisfiable != corev1.ScheduleAnyway || c.LabelSelector.MatchLabels["app.kubernetes.io/instance"] != releaseName {
			t.Errorf("spread constraint %+v", c)
		}
	}
	if !slices.Equal(keys, []string{"kubernetes.io/hostname", "topology.kubernetes.io/zone"}) {
		t.Errorf("three replicas: spread over %v, want hostname and zone", keys)
	}
	if pdb, spread := render(); pdb != nil || spread != nil {
		t.Errorf("one replica: PodDisruptionBudget %+v, spread %+v; want neither", pdb, spread)
	}
	// Autoscaling down to one pod: spread, but a PDB would block drains.
	if pdb, spread := render("autoscaling.enabled=true", "autoscaling.minReplicas=1", "workflow.key=a-shared-run-token-key", "config.mcp.legacySSE=false"); pdb != nil || len(spread) != 2 {
		t.Errorf("autoscaling from one pod: PodDisruptionBudget %+v, %d spread constraints; want none and 2", pdb, len(spread))
	}
	if pdb, _ := render(append(slices.Clone(manyReplicas), "podDisruptionBudget.enabled=false")...); pdb != nil {
		t.Error("podDisruptionBudget.enabled=false still rendered one")
	}
	_, own := render(append(slices.Clone(manyReplicas), "topologySpreadConstraints[0].maxSkew=2", "topologySpreadConstraints[0].topologyKey=rack", "topologySpreadConstraints[0].whenUnsatisfiable=DoNotSchedule")...)
	if len(own) != 1 || own[0].TopologyKey != "rack" {
		t.Errorf("own constraints replaced by %+v", own)
	}
}

// TestChartRateLimitIsDividedByReplicas: config.limits.ratePerMinute is a
// caller's budget across replicas; each pod gets its share.
func TestChartRateLimitIsDividedByReplicas(t *testing.T) {
	cases := []struct {
		sets []string
		want int
	}{
		{nil, 600},
		{manyReplicas, 200},
		{[]string{"autoscaling.enabled=true", "autoscaling.maxReplicas=6", "workflow.key=a-shared-run-token-key", "config.mcp.legacySSE=false"}, 100},
		{append(slices.Clone(manyReplicas), "config.limits.ratePerMinute=2"), 1},
		{append(slices.Clone(manyReplicas), "config.limits.ratePerMinute=0"), 0},
		// A shared store keeps one budget across pods: no division.
		{append(slices.Clone(manyReplicas), "redis.address=redis.cache:6379"), 600},
	}
	for _, c := range cases {
		out, err := renderChart(t, nil, c.sets...)
		if err != nil {
			t.Fatalf("%v: %v", c.sets, err)
		}
		cfg := renderedConfig(t, decodeStrict(t, out))
		if got := cfg.Limits.RatePerMinute; got != c.want {
			t.Errorf("%v: limits.rate_per_minute %d, want %d", c.sets, got, c.want)
		}
		if shared := slices.Contains(c.sets, "redis.address=redis.cache:6379"); shared != (cfg.Limits.SharedStore == "redis") {
			t.Errorf("%v: limits.shared_store %q", c.sets, cfg.Limits.SharedStore)
		}
	}
}

// TestChartSharedStore: redis.address renders limits.shared_store redis
// with the redis section, and the password comes from the named Secret
// as CURSUS_REDIS_PASSWORD, never from the ConfigMap.
func TestChartSharedStore(t *testing.T) {
	out, err := renderChart(t, nil, append(slices.Clone(manyReplicas), "redis.address=redis.cache:6379", "redis.existingSecret=redis-auth", "redis.db=2", "redis.timeout=100ms")...)
	if err != nil {
		t.Fatal(err)
	}
	objs := decodeStrict(t, out)
	cfg := renderedConfig(t, objs)
	if r := cfg.Redis; r.Address != "redis.cache:6379" || r.DB != 2 || r.Timeout != 100*time.Millisecond || r.KeyPrefix != "cursus:" || r.Password != "" {
		t.Errorf("rendered redis section %+v", r)
	}
	if err := cfg.Validate(); err != nil {
		t.Errorf("rendered config does not validate: %v", err)
	}
	if !strings.Contains(string(out), "name: CURSUS_REDIS_PASSWORD") || !strings.Contains(string(out), "name: redis-auth") {
		t.Error("the Redis password is not taken from the Secret redis-auth as CURSUS_REDIS_PASSWORD")
	}
	if _, err := renderChart(t, nil, "redis.address=no-port"); err == nil {
		t.Error("redis.address without a port rendered")
	}
}
