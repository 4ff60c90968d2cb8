package deploy

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/cursus-dev/cursus/server"
)

const (
	chartDir         = "helm/cursus-mcp"
	everythingOnFile = "helm/cursus-mcp/ci/everything-on.yaml"
	releaseName      = "cursus"
	releaseNamespace = "ml-platform"
)

// chartValueSets are the values the chart is checked with: the defaults and
// one file that turns every optional object on.
var chartValueSets = []struct {
	name  string
	files []string
	kinds []string // kinds the render must contain, exactly
}{
	{"default", nil, []string{"ConfigMap", "Deployment", "Secret", "Service", "ServiceAccount"}},
	{"everything-on", []string{everythingOnFile}, []string{
		"ConfigMap", "Deployment", "HorizontalPodAutoscaler", "Ingress", "NetworkPolicy",
		"PodDisruptionBudget", "Secret", "Service", "ServiceAccount", "ServiceMonitor",
	}},
}

// helm runs helm in the repository root and returns stdout, or the error
// with stderr.
func helm(t *testing.T, args ...string) ([]byte, error) {
	t.Helper()
	cmd := exec.Command(helmBinary(t), args...)
	cmd.Dir = repoRoot(t)
	// Keep helm away from the user's repositories, plugins and caches.
	home := t.TempDir()
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+filepath.Join(home, "cache"),
		"HELM_CONFIG_HOME="+filepath.Join(home, "config"), "HELM_DATA_HOME="+filepath.Join(home, "data"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.Bytes(), fmt.Errorf("helm %s: %v\n%s%s", strings.Join(args, " "), err, stderr.Bytes(), stdout.Bytes())
	}
	return stdout.Bytes(), nil
}

func valuesArgs(files []string, sets ...string) []string {
	var args []string
	for _, f := range files {
		args = append(args, "-f", f)
	}
	for _, s := range sets {
		args = append(args, "--set", s)
	}
	return args
}

func renderChart(t *testing.T, files []string, sets ...string) ([]byte, error) {
	t.Helper()
	args := append([]string{"template", releaseName, chartDir, "--namespace", releaseNamespace}, valuesArgs(files, sets...)...)
	return helm(t, args...)
}

func TestChartLintStrict(t *testing.T) {
	for _, vs := range chartValueSets {
		t.Run(vs.name, func(t *testing.T) {
			if out, err := helm(t, append([]string{"lint", "--strict", chartDir}, valuesArgs(vs.files)...)...); err != nil {
				t.Fatal(err)
			} else if !bytes.Contains(out, []byte("0 chart(s) failed")) {
				t.Fatalf("helm lint did not report success:\n%s", out)
			}
		})
	}
}

// renderedObject is one document of a helm template run.
type renderedObject struct {
	Source string // the template that produced it
	Kind   string
	Doc    []byte
}

func splitRender(t *testing.T, out []byte) []renderedObject {
	t.Helper()
	var objs []renderedObject
	for _, doc := range bytes.Split(out, []byte("\n---")) {
		var src string
		for _, line := range strings.Split(string(doc), "\n") {
			if s, ok := strings.CutPrefix(line, "# Source: "); ok {
				src = s
			}
		}
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			t.Fatalf("%s: not YAML: %v", src, err)
		}
		if meta.Kind == "" && meta.APIVersion == "" {
			continue // empty document or comments only
		}
		objs = append(objs, renderedObject{Source: src, Kind: meta.Kind, Doc: doc})
	}
	return objs
}

// typedObjects are the Kubernetes Go types rendered objects must decode
// into, by apiVersion and kind.
func newTyped(apiVersion, kind string) (any, bool) {
	switch apiVersion + "/" + kind {
	case "apps/v1/Deployment":
		return &appsv1.Deployment{}, true
	case "v1/Service":
		return &corev1.Service{}, true
	case "v1/ConfigMap":
		return &corev1.ConfigMap{}, true
	case "v1/Secret":
		return &corev1.Secret{}, true
	case "v1/ServiceAccount":
		return &corev1.ServiceAccount{}, true
	case "networking.k8s.io/v1/Ingress":
		return &networkingv1.Ingress{}, true
	case "networking.k8s.io/v1/NetworkPolicy":
		return &networkingv1.NetworkPolicy{}, true
	case "autoscaling/v2/HorizontalPodAutoscaler":
		return &autoscalingv2.HorizontalPodAutoscaler{}, true
	case "policy/v1/PodDisruptionBudget":
		return &policyv1.PodDisruptionBudget{}, true
	}
	return nil, false
}

// rendered is a chart render decoded strictly, by kind.
type rendered struct {
	objects map[string]any // kind → typed object (the chart renders one of each; Secrets are Secret/<name>)
	kinds   []string
}

// secrets are the rendered Secrets.
func (r rendered) secrets() []*corev1.Secret {
	var out []*corev1.Secret
	for key, o := range r.objects {
		if strings.HasPrefix(key, "Secret/") {
			out = append(out, o.(*corev1.Secret))
		}
	}
	return out
}

// decodeStrict decodes every object into its Kubernetes type, failing on
// unknown or duplicate fields; the ServiceMonitor (a CRD without Go types
// here) is checked as unstructured data.
func decodeStrict(t *testing.T, out []byte) rendered {
	t.Helper()
	r, errs := decodeRender(t, out)
	for _, err := range errs {
		t.Error(err)
	}
	return r
}

func decodeRender(t *testing.T, out []byte) (rendered, []error) {
	t.Helper()
	var errs []error
	r := rendered{objects: map[string]any{}}
	for _, o := range splitRender(t, out) {
		var meta metav1.TypeMeta
		_ = yaml.Unmarshal(o.Doc, &meta)
		key := o.Kind
		if o.Kind == "Secret" {
			// The tokens file and the workflow key are two Secrets.
			var named struct {
				Metadata struct{ Name string } `json:"metadata"`
			}
			_ = yaml.Unmarshal(o.Doc, &named)
			key = "Secret/" + named.Metadata.Name
		}
		if _, dup := r.objects[key]; dup {
			errs = append(errs, fmt.Errorf("%s: second %s in one render", o.Source, key))
		}
		r.kinds = append(r.kinds, o.Kind)
		if meta.APIVersion == "monitoring.coreos.com/v1" && o.Kind == "ServiceMonitor" {
			var sm map[string]any
			if err := yaml.UnmarshalStrict(o.Doc, &sm); err != nil {
				errs = append(errs, fmt.Errorf("%s: %v", o.Source, err))
			}
			errs = append(errs, serviceMonitorProblems(o.Source, sm)...)
			r.objects[o.Kind] = sm
			continue
		}
		obj, ok := newTyped(meta.APIVersion, o.Kind)
		if !ok {
			errs = append(errs, fmt.Errorf("%s: %s %s has no Go type in this test; add it", o.Source, meta.APIVersion, o.Kind))
			continue
		}
		if err := yaml.UnmarshalStrict(o.Doc, obj); err != nil {
			errs = append(errs, fmt.Errorf("%s: strict decode into %T: %v", o.Source, obj, err))
			continue
		}
		r.objects[key] = obj
	}
	slices.Sort(r.kinds)
	return r, errs
}

// TestStrictDecodeCatchesMistakes proves the decoder rejects what a
// template typo would produce.
func TestStrictDecodeCatchesMistakes(t *testing.T) {
	cases := map[string]string{
		"unknown field":   "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: x\nspec:\n  replica: 2\n",
		"wrong type":      "apiVersion: v1\nkind: Service\nmetadata:\n  name: x\nspec:\n  ports:\n    - port: eighty\n",
		"duplicate key":   "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  name: y\n",
		"unknown kind":    "apiVersion: batch/v1\nkind: CronJob\nmetadata:\n  name: x\n",
		"monitor no port": "apiVersion: monitoring.coreos.com/v1\nkind: ServiceMonitor\nmetadata:\n  name: x\nspec:\n  selector:\n    matchLabels: {a: b}\n  endpoints:\n    - path: /metrics\n",
	}
	for name, doc := range cases {
		t.Run(name, func(t *testing.T) {
			if _, errs := decodeRender(t, []byte("---\n# Source: test\n"+doc)); len(errs) == 0 {
				t.Errorf("accepted:\n%s", doc)
			}
		})
	}
}

func serviceMonitorProblems(source string, sm map[string]any) []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(source+": "+format, args...)) }
	get := func(path ...string) any {
		var cur any = sm
		for _, p := range path {
			m, ok := cur.(map[string]any)
			if !ok {
				return nil
			}
			cur = m[p]
		}
		return cur
	}
	if name, _ := get("metadata", "name").(string); name == "" {
		bad("metadata.name missing")
	}
	if labels, _ := get("spec", "selector", "matchLabels").(map[string]any); len(labels) == 0 {
		bad("spec.selector.matchLabels missing")
	}
	allowed := map[string]bool{"port": true, "path": true, "interval": true, "scrapeTimeout": true, "scheme": true}
	eps, _ := get("spec", "endpoints").([]any)
	if len(eps) == 0 {
		bad("spec.endpoints missing")
	}
	for i, e := range eps {
		ep, _ := e.(map[string]any)
		if ep["port"] != "http" || ep["path"] != "/metrics" {
			bad("spec.endpoints[%d] = %v, want port http and path /metrics", i, ep)
		}
		for k := range ep {
			if !allowed[k] {
				bad("spec.endpoints[%d].%s is not a field this chart means to set", i, k)
			}
		}
	}
	return errs
}

func TestChartRendersStrictly(t *testing.T) {
	for _, vs := range chartValueSets {
		t.Run(vs.name, func(t *testing.T) {
			out, err := renderChart(t, vs.files)
			if err != nil {
				t.Fatal(err)
			}
			r := decodeStrict(t, out)
			if !slices.Equal(r.kinds, vs.kinds) {
				t.Errorf("rendered kinds %v, want %v", r.kinds, vs.kinds)
			}
			checkWiring(t, r)
		})
	}
}

// checkWiring checks the references between objects: selectors, names,
// volumes and ports.
func checkWiring(t *testing.T, r rendered) {
	t.Helper()
	dep, ok := r.objects["Deployment"].(*appsv1.Deployment)
	if !ok {
		t.Fatal("no Deployment rendered")
	}
	podLabels := dep.Spec.Template.Labels
	selects := func(sel map[string]string) bool {
		for k, v := range sel {
			if podLabels[k] != v {
				return false
			}
		}
		return len(sel) > 0
	}
	if !selects(dep.Spec.Selector.MatchLabels) {
		t.Error("Deployment selector does not match its pod labels")
	}
	if svc, ok := r.objects["Service"].(*corev1.Service); ok && !selects(svc.Spec.Selector) {
		t.Error("Service selector does not match the pods")
	}
	if pdb, ok := r.objects["PodDisruptionBudget"].(*policyv1.PodDisruptionBudget); ok && !selects(pdb.Spec.Selector.MatchLabels) {
		t.Error("PodDisruptionBudget selector does not match the pods")
	}
	if np, ok := r.objects["NetworkPolicy"].(*networkingv1.NetworkPolicy); ok && !selects(np.Spec.PodSelector.MatchLabels) {
		t.Error("NetworkPolicy podSelector does not match the pods")
	}
	if hpa, ok := r.objects["HorizontalPodAutoscaler"].(*autoscalingv2.HorizontalPodAutoscaler); ok {
		if hpa.Spec.ScaleTargetRef.Kind != "Deployment" || hpa.Spec.ScaleTargetRef.Name != dep.Name {
			t.Errorf("HPA targets %s/%s, want Deployment/%s", hpa.Spec.ScaleTargetRef.Kind, hpa.Spec.ScaleTargetRef.Name, dep.Name)
		}
		if dep.Spec.Replicas != nil {
			t.Error("Deployment sets replicas while the HPA owns them")
		}
	}
	if ing, ok := r.objects["Ingress"].(*networkingv1.Ingress); ok {
		svc := r.objects["Service"].(*corev1.Service)
		for _, rule := range ing.Spec.Rules {
			for _, p := range rule.HTTP.Paths {
				if p.Backend.Service == nil || p.Backend.Service.Name != svc.Name || p.Backend.Service.Port.Name != "http" {
					t.Errorf("Ingress path %s does not point at Service %s port http", p.Path, svc.Name)
				}
			}
		}
		if len(ing.Spec.TLS) == 0 {
			t.Error("Ingress without TLS in the everything-on render")
		}
	}
	if sa, ok := r.objects["ServiceAccount"].(*corev1.ServiceAccount); ok && dep.Spec.Template.Spec.ServiceAccountName != sa.Name {
		t.Errorf("pods use ServiceAccount %q, chart created %q", dep.Spec.Template.Spec.ServiceAccountName, sa.Name)
	}

	volumes := map[string]corev1.Volume{}
	for _, v := range dep.Spec.Template.Spec.Volumes {
		volumes[v.Name] = v
	}
	c := dep.Spec.Template.Spec.Containers[0]
	for _, m := range c.VolumeMounts {
		if _, ok := volumes[m.Name]; !ok {
			t.Errorf("volumeMount %s (%s) has no volume", m.Name, m.MountPath)
		}
	}
	if cm, ok := r.objects["ConfigMap"].(*corev1.ConfigMap); !ok || volumes["config"].ConfigMap == nil || volumes["config"].ConfigMap.Name != cm.Name {
		t.Error("config volume does not use the rendered ConfigMap")
	}
	// A Secret a render creates is the tokens file or the workflow signing
	// key; a volume must use it.
	for _, sec := range r.secrets() {
		used := false
		for _, name := range []string{"tokens", "workflow-key"} {
			if v := volumes[name].Secret; v != nil && v.SecretName == sec.Name {
				used = true
			}
		}
		if !used {
			t.Errorf("no tokens or workflow-key volume uses the rendered Secret %s", sec.Name)
		}
	}
	if len(c.Ports) != 1 || c.Ports[0].Name != "http" || c.Ports[0].ContainerPort != 8080 {
		t.Errorf("container ports %v, want http 8080 (the image's --addr)", c.Ports)
	}
}

// renderedConfig writes the ConfigMap's cursus.yaml to a file and loads it
// the way the server does.
func renderedConfig(t *testing.T, r rendered) server.Config {
	t.Helper()
	cm := r.objects["ConfigMap"].(*corev1.ConfigMap)
	text, ok := cm.Data["cursus.yaml"]
	if !ok {
		t.Fatal("ConfigMap has no cursus.yaml")
	}
	path := filepath.Join(t.TempDir(), "cursus.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := server.LoadConfig(path, noEnv)
	if err != nil {
		t.Fatalf("rendered config does not load: %v\n%s", err, text)
	}
	return cfg
}

func TestChartDefaultRender(t *testing.T) {
	out, err := renderChart(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := decodeStrict(t, out)

	cfg := renderedConfig(t, r)
	if cfg.Gates.EnableDestructive || cfg.Gates.AllowScriptExec {
		t.Errorf("default render opens gates: %+v", cfg.Gates)
	}
	if cfg.Listen.Addr != "0.0.0.0:8080" || cfg.Listen.AllowUnauthenticatedRemote {
		t.Errorf("listen = %+v, want 0.0.0.0:8080 without allow_unauthenticated_remote", cfg.Listen)
	}
	if cfg.Workspace.Root != "/workspace" {
		t.Errorf("workspace.root = %q, want /workspace", cfg.Workspace.Root)
	}

	dep := r.objects["Deployment"].(*appsv1.Deployment)
	pod := dep.Spec.Template.Spec
	if psc := pod.SecurityContext; psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot {
		t.Error("pod securityContext.runAsNonRoot is not true")
	} else if psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Error("pod seccompProfile is not RuntimeDefault")
	}
	if len(pod.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(pod.Containers))
	}
	c := pod.Containers[0]
	sc := c.SecurityContext
	switch {
	case sc == nil:
		t.Fatal("container has no securityContext")
	case sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot:
		t.Error("container runAsNonRoot is not true")
	case sc.RunAsUser == nil || *sc.RunAsUser == 0:
		t.Error("container runAsUser is not a non-root UID")
	case sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem:
		t.Error("container readOnlyRootFilesystem is not true")
	case sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation:
		t.Error("container allowPrivilegeEscalation is not false")
	case sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) > 0:
		t.Errorf("container capabilities %+v, want drop [ALL] and nothing added", sc.Capabilities)
	case sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault:
		t.Error("container seccompProfile is not RuntimeDefault")
	}
	probePath := func(p *corev1.Probe) string {
		if p == nil || p.HTTPGet == nil {
			return ""
		}
		return p.HTTPGet.Path
	}
	if got := probePath(c.LivenessProbe); got != "/healthz" {
		t.Errorf("liveness probe path %q, want /healthz", got)
	}
	if got := probePath(c.ReadinessProbe); got != "/readyz" {
		t.Errorf("readiness probe path %q, want /readyz", got)
	}
	for _, res := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if q, ok := c.Resources.Requests[res]; !ok || q.IsZero() {
			t.Errorf("no %s request", res)
		}
	}
	if q, ok := c.Resources.Limits[corev1.ResourceMemory]; !ok || q.IsZero() {
		t.Error("no memory limit")
	}
	// The only writable places: emptyDirs on /tmp and /workspace.
	mounts := map[string]string{}
	for _, m := range c.VolumeMounts {
		mounts[m.MountPath] = m.Name
	}
	for _, v := range pod.Volumes {
		if (v.Name == mounts["/tmp"] || v.Name == mounts["/workspace"]) && v.EmptyDir == nil {
			t.Errorf("volume %s is not an emptyDir", v.Name)
		}
	}
	if mounts["/tmp"] == "" || mounts["/workspace"] == "" {
		t.Errorf("mounts %v: want /tmp and /workspace", mounts)
	}
	if mounts["/etc/cursus/cursus.yaml"] != "config" {
		t.Error("config file is not mounted at /etc/cursus/cursus.yaml")
	}
	if pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken {
		t.Error("pods mount a Kubernetes API token they do not need")
	}
}

func TestChartEverythingOnRender(t *testing.T) {
	out, err := renderChart(t, []string{everythingOnFile})
	if err != nil {
		t.Fatal(err)
	}
	r := decodeStrict(t, out)
	cfg := renderedConfig(t, r)
	if !cfg.Gates.EnableDestructive || cfg.Auth.TokensFile != "/etc/cursus/auth/tokens" || cfg.Auth.OIDC.Issuer == "" {
		t.Errorf("gates %+v / auth %+v: want destructive on behind tokens and OIDC", cfg.Gates, cfg.Auth)
	}
	wantSteps := []string{"/etc/cursus/catalogs/steps/team-steps"}
	wantPipelines := []string{"/etc/cursus/catalogs/pipelines/team-dags", "/etc/cursus/catalogs/pipelines/shared"}
	if !slices.Equal(cfg.Workspace.StepDirs, wantSteps) || !slices.Equal(cfg.Workspace.PipelineDirs, wantPipelines) {
		t.Errorf("catalog dirs %v %v, want %v %v", cfg.Workspace.StepDirs, cfg.Workspace.PipelineDirs, wantSteps, wantPipelines)
	}
	dep := r.objects["Deployment"].(*appsv1.Deployment)
	mounted := map[string]bool{}
	for _, m := range dep.Spec.Template.Spec.Containers[0].VolumeMounts {
		mounted[m.MountPath] = true
	}
	for _, d := range append(append(wantSteps, wantPipelines...), "/etc/cursus/auth") {
		if !mounted[d] {
			t.Errorf("%s is in the config but not mounted", d)
		}
	}
	// The tokens file the chart puts in the Secret is one the server accepts.
	sec := r.objects["Secret/cursus-cursus-mcp-tokens"].(*corev1.Secret)
	tokens := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(tokens, sec.Data["tokens"], 0o600); err != nil {
		t.Fatal(err)
	}
	if err := server.CheckAuth(server.AuthConfig{TokensFile: tokens}); err != nil {
		t.Errorf("Secret's tokens file: %v", err)
	}

	if cfg.Workflow.KeyFile != "/etc/cursus/workflow/key" || cfg.Workflow.TokenTTL != 12*time.Hour {
		t.Errorf("workflow %+v: want key_file /etc/cursus/workflow/key and token_ttl 12h", cfg.Workflow)
	}

	sa := r.objects["ServiceAccount"].(*corev1.ServiceAccount)
	if sa.Annotations["eks.amazonaws.com/role-arn"] != "arn:aws:iam::123456789012:role/cursus-mcp" {
		t.Errorf("ServiceAccount annotations %v: want the IRSA role", sa.Annotations)
	}
}

// TestChartSchemaRejectsBadValues: values.schema.json must turn typos and
// wrong types into install errors.
func TestChartSchemaRejectsBadValues(t *testing.T) {
	cases := []struct {
		name, values, wantErr string
	}{
		{"string replica count", "replicaCount: two\n", "replicaCount"},
		{"quoted number", "replicaCount: \"2\"\n", "replicaCount"},
		{"unknown top-level key", "replicas: 2\n", "replicas"},
		{"unknown nested key", "config:\n  gates:\n    enableDestructiv: true\n", "enableDestructiv"},
		{"string for a boolean", "config:\n  gates:\n    enableDestructive: \"yes\"\n", "enableDestructive"},
		{"bad duration", "config:\n  limits:\n    toolTimeout: 2 minutes\n", "toolTimeout"},
		{"bad log level", "config:\n  telemetry:\n    logLevel: verbose\n", "logLevel"},
		{"workflow key shorter than 16 bytes", "workflow:\n  key: short\n", "key"},
		{"bad workflow token TTL", "workflow:\n  tokenTTL: one day\n", "tokenTTL"},
		{"bad catalog name", "catalogs:\n  steps:\n    - name: Team_Steps\n      configMap: x\n", "name"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "bad.yaml")
			if err := os.WriteFile(file, []byte(tc.values), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := renderChart(t, []string{file})
			if err == nil {
				t.Fatalf("helm accepted values %q", tc.values)
			}
			if !strings.Contains(err.Error(), "schema") || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error does not name the schema and %q:\n%v", tc.wantErr, err)
			}
		})
	}
	t.Run("--set replicaCount=two", func(t *testing.T) {
		if _, err := renderChart(t, nil, "replicaCount=two"); err == nil || !strings.Contains(err.Error(), "replicaCount") {
			t.Errorf("helm --set replicaCount=two: %v, want a schema error", err)
		}
	})
}

// TestChartGatesNeedAuth: gated tools on a pod network without auth would
// make the server refuse to start, so the chart refuses to render.
func TestChartGatesNeedAuth(t *testing.T) {
	if _, err := renderChart(t, nil, "config.gates.enableDestructive=true"); err == nil || !strings.Contains(err.Error(), "need authentication") {
		t.Errorf("destructive gates without auth rendered (err %v)", err)
	}
	if _, err := renderChart(t, nil, "config.gates.allowScriptExec=true"); err == nil || !strings.Contains(err.Error(), "need authentication") {
		t.Errorf("script exec without auth rendered (err %v)", err)
	}
	ok := [][]string{
		{"config.gates.enableDestructive=true", "auth.tokens.enabled=true", "auth.tokens.existingSecret=cursus-tokens"},
		{"config.gates.enableDestructive=true", "auth.oidc.issuer=https://login.example.com", "auth.oidc.audience=cursus"},
		{"config.gates.enableDestructive=true", "config.listen.allowUnauthenticatedRemote=true"},
	}
	for _, sets := range ok {
		out, err := renderChart(t, nil, sets...)
		if err != nil {
			t.Errorf("%v: %v", sets, err)
			continue
		}
		r := decodeStrict(t, out)
		if cfg := renderedConfig(t, r); !cfg.Gates.EnableDestructive {
			t.Errorf("%v: destructive gate not rendered on", sets)
		}
		if _, made := r.objects["Secret/cursus-cursus-mcp-tokens"]; made {
			t.Errorf("%v: chart created a tokens Secret although none was asked for", sets)
		}
	}
	if _, err := renderChart(t, nil, "auth.oidc.issuer=https://login.example.com"); err == nil || !strings.Contains(err.Error(), "audience") {
		t.Errorf("OIDC without an audience rendered (err %v)", err)
	}
	if _, err := renderChart(t, nil, "auth.tokens.enabled=true"); err == nil || !strings.Contains(err.Error(), "existingSecret") {
		t.Errorf("tokens enabled without a Secret or content rendered (err %v)", err)
	}
}

// renderNotes renders NOTES.txt's named template. helm template skips
// NOTES.txt and helm install --dry-run still wants a cluster, so the test
// renders a copy of the chart with one extra ConfigMap carrying the notes.
func renderNotes(t *testing.T, files []string, sets ...string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "cursus-mcp")
	if err := os.CopyFS(dir, os.DirFS(filepath.Join(repoRoot(t), chartDir))); err != nil {
		t.Fatal(err)
	}
	probe := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: notes\ndata:\n  notes: {{ include \"cursus-mcp.notes\" . | quote }}\n"
	if err := os.WriteFile(filepath.Join(dir, "templates", "zz-notes-probe.yaml"), []byte(probe), 0o600); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"template", releaseName, dir, "--namespace", releaseNamespace,
		"--show-only", "templates/zz-notes-probe.yaml"}, valuesArgs(files, sets...)...)
	out, err := helm(t, args...)
	if err != nil {
		t.Fatal(err)
	}
	var cm corev1.ConfigMap
	if err := yaml.UnmarshalStrict(out, &cm); err != nil {
		t.Fatal(err)
	}
	return cm.Data["notes"]
}

func TestChartNotes(t *testing.T) {
	notes := renderNotes(t, []string{everythingOnFile})
	for _, want := range []string{
		"MCP endpoint (streamable HTTP):  https://cursus.example.com/mcp",
		`curl -s -X POST https://cursus.example.com/call/tools__help -H "Authorization: Bearer $CURSUS_TOKEN" -d '{}'`,
		`claude mcp add --transport http cursus https://cursus.example.com/mcp --header "Authorization: Bearer $CURSUS_TOKEN"`,
		"destructive and file-writing tools",
	} {
		if !strings.Contains(notes, want) {
			t.Errorf("everything-on NOTES lack %q:\n%s", want, notes)
		}
	}
	notes = renderNotes(t, nil)
	for _, want := range []string{
		"kubectl -n ml-platform port-forward svc/cursus-cursus-mcp 8080:80",
		`curl -s -X POST http://127.0.0.1:8080/call/tools__help -d '{}'`,
		"Remote callers may run: read-only tools.",
		"Authentication is OFF",
	} {
		if !strings.Contains(notes, want) {
			t.Errorf("default NOTES lack %q:\n%s", want, notes)
		}
	}
}

// chartFixedKeys are config keys the chart sets itself or leaves to the
// server default on purpose; every other key must be reachable from values.
var chartFixedKeys = map[string]string{
	"listen.addr":            "fixed 0.0.0.0:8080: the image entrypoint's --addr wins anyway",
	"workspace.root":         "fixed /workspace, the writable emptyDir",
	"auth.oidc.jwks_url":     "rendered only when auth.oidc.jwksURL is set",
	"aws.endpoint":           "rendered only when aws.endpoint is set",
	"aws.s3_endpoint":        "rendered only when aws.s3Endpoint is set",
	"aws.sagemaker_endpoint": "rendered only when aws.sagemakerEndpoint is set",
	"workflow.key":           "never rendered: the key comes from a Secret through workflow.key_file",
	"workflow.previous_keys": "never rendered: previous keys come from the Secret through workflow.previous_keys_file",
	"redis.password":         "never rendered: the password comes from redis.existingSecret as CURSUS_REDIS_PASSWORD",
	"redis.password_file":    "never rendered: the password comes from redis.existingSecret as CURSUS_REDIS_PASSWORD",
}

// TestChartCoversEveryConfigKey fails when the server grows a config key
// the chart cannot set.
func TestChartCoversEveryConfigKey(t *testing.T) {
	out, err := renderChart(t, []string{everythingOnFile})
	if err != nil {
		t.Fatal(err)
	}
	r := decodeStrict(t, out)
	var doc map[string]any
	if err := yaml.Unmarshal([]byte(r.objects["ConfigMap"].(*corev1.ConfigMap).Data["cursus.yaml"]), &doc); err != nil {
		t.Fatal(err)
	}
	for _, key := range configKeys() {
		if _, ok := lookupKey(doc, key); !ok && chartFixedKeys[key] == "" {
			t.Errorf("config key %s is not rendered by the everything-on values: add it to values.yaml, values.schema.json and the config template", key)
		}
	}
	out, err = renderChart(t, nil, "auth.oidc.issuer=https://login.example.com", "auth.oidc.audience=a",
		"auth.oidc.jwksURL=https://login.example.com/keys", "aws.endpoint=http://127.0.0.1:4566",
		"aws.s3Endpoint=https://bucket.vpce-1.s3.us-east-1.vpce.amazonaws.com", "aws.sagemakerEndpoint=https://vpce-2.api.sagemaker.us-east-1.vpce.amazonaws.com")
	if err != nil {
		t.Fatal(err)
	}
	cfg := renderedConfig(t, decodeStrict(t, out))
	if cfg.Auth.OIDC.JWKSURL != "https://login.example.com/keys" || cfg.AWS.Endpoint != "http://127.0.0.1:4566" ||
		cfg.AWS.S3Endpoint != "https://bucket.vpce-1.s3.us-east-1.vpce.amazonaws.com" || cfg.AWS.SageMakerEndpoint != "https://vpce-2.api.sagemaker.us-east-1.vpce.amazonaws.com" {
		t.Errorf("optional keys not rendered: oidc %+v aws %+v", cfg.Auth.OIDC, cfg.AWS)
	}
}

// workflowMount is the container's mount of the workflow-key volume and the
// volume itself (nil when the pod mounts no key).
func workflowMount(t *testing.T, r rendered) (*corev1.VolumeMount, *corev1.Volume) {
	t.Helper()
	pod := r.objects["Deployment"].(*appsv1.Deployment).Spec.Template.Spec
	var mount *corev1.VolumeMount
	for i, m := range pod.Containers[0].VolumeMounts {
		if m.Name == "workflow-key" {
			mount = &pod.Containers[0].VolumeMounts[i]
		}
	}
	for i, v := range pod.Volumes {
		if v.Name == "workflow-key" {
			return mount, &pod.Volumes[i]
		}
	}
	return mount, nil
}

// TestChartWorkflowKey: replicas share the run-token signing key through a
// Secret mounted read-only and named by workflow.key_file: the operator's,
// or the chart's own (workflow.key, else a generated key), so any replica
// count works without one given; previous keys ride along for a rotation.
func TestChartWorkflowKey(t *testing.T) {
	t.Run("existingSecret", func(t *testing.T) {
		out, err := renderChart(t, nil, "replicaCount=3", "config.mcp.legacySSE=false", "workflow.existingSecret=team-workflow-key", "workflow.secretKey=hmac")
		if err != nil {
			t.Fatal(err)
		}
		r := decodeStrict(t, out)
		checkWiring(t, r)
		if secs := r.secrets(); len(secs) != 0 {
			t.Errorf("chart created Secret %s although workflow.existingSecret names one", secs[0].Name)
		}
		mount, vol := workflowMount(t, r)
		if mount == nil || !mount.ReadOnly || mount.MountPath != "/etc/cursus/workflow" {
			t.Errorf("workflow-key mount %+v, want read-only at /etc/cursus/workflow", mount)
		}
		if vol == nil || vol.Secret == nil || vol.Secret.SecretName != "team-workflow-key" ||
			len(vol.Secret.Items) != 1 || vol.Secret.Items[0].Key != "hmac" || vol.Secret.Items[0].Path != "hmac" {
			t.Errorf("workflow-key volume %+v, want Secret team-workflow-key item hmac", vol)
		}
		cfg := renderedConfig(t, r)
		if cfg.Workflow.KeyFile != "/etc/cursus/workflow/hmac" || cfg.Workflow.Key != "" || cfg.Workflow.PreviousKeysFile != "" {
			t.Errorf("workflow %+v, want key_file /etc/cursus/workflow/hmac, no inline key, no previous keys", cfg.Workflow)
		}
		if cfg.Workflow.TokenTTL != 24*time.Hour {
			t.Errorf("token_ttl %v, want the 24h default", cfg.Workflow.TokenTTL)
		}
		out, err = renderChart(t, nil, "workflow.existingSecret=team-workflow-key", "workflow.previousSecretKey=retired")
		if err != nil {
			t.Fatal(err)
		}
		r = decodeStrict(t, out)
		if _, vol := workflowMount(t, r); vol == nil || len(vol.Secret.Items) != 2 || vol.Secret.Items[1].Key != "retired" {
			t.Errorf("previous keys of the existing Secret not mounted: %+v", vol)
		}
		if f := renderedConfig(t, r).Workflow.PreviousKeysFile; f != "/etc/cursus/workflow/retired" {
			t.Errorf("previous_keys_file %q, want /etc/cursus/workflow/retired", f)
		}
	})
	// secretKeys renders sets and reads back, as the server would from the
	// mounted files, the signing key and the previous keys.
	secretKeys := func(t *testing.T, sets ...string) (string, []string, rendered) {
		t.Helper()
		out, err := renderChart(t, nil, sets...)
		if err != nil {
			t.Fatal(err)
		}
		r := decodeStrict(t, out)
		checkWiring(t, r)
		sec, ok := r.objects["Secret/cursus-cursus-mcp-workflow"].(*corev1.Secret)
		if !ok {
			t.Fatalf("no Secret cursus-cursus-mcp-workflow rendered (kinds %v)", r.kinds)
		}
		cfg := renderedConfig(t, r)
		dir := t.TempDir()
		for name, data := range sec.Data {
			if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		wc := server.WorkflowConfig{KeyFile: filepath.Join(dir, filepath.Base(cfg.Workflow.KeyFile))}
		if cfg.Workflow.PreviousKeysFile != "" {
			wc.PreviousKeysFile = filepath.Join(dir, filepath.Base(cfg.Workflow.PreviousKeysFile))
		}
		key, err := wc.SigningKey()
		if err != nil {
			t.Fatal(err)
		}
		previous, err := wc.VerifyKeys()
		if err != nil {
			t.Fatal(err)
		}
		var prev []string
		for _, p := range previous {
			prev = append(prev, string(p))
		}
		if cm := r.objects["ConfigMap"].(*corev1.ConfigMap); strings.Contains(cm.Data["cursus.yaml"], string(key)) {
			t.Error("the signing key is in the ConfigMap")
		}
		return string(key), prev, r
	}
	t.Run("key content and previous keys", func(t *testing.T) {
		const key = "a-shared-run-token-key"
		got, prev, r := secretKeys(t, "replicaCount=2", "config.mcp.legacySSE=false", "workflow.key="+key, "workflow.tokenTTL=2h",
			"workflow.previousKeys={retired-key-0123456789,older-key-0123456789}")
		if got != key || !slices.Equal(prev, []string{"retired-key-0123456789", "older-key-0123456789"}) {
			t.Errorf("keys from the Secret: %q, previous %q", got, prev)
		}
		cfg := renderedConfig(t, r)
		if cfg.Workflow.TokenTTL != 2*time.Hour || cfg.Workflow.KeyFile != "/etc/cursus/workflow/key" || cfg.Workflow.PreviousKeysFile != "/etc/cursus/workflow/previous" {
			t.Errorf("workflow %+v", cfg.Workflow)
		}
	})
	t.Run("generated when not given", func(t *testing.T) {
		for _, sets := range [][]string{nil, {"replicaCount=2", "config.mcp.legacySSE=false"}, {"autoscaling.enabled=true", "config.mcp.legacySSE=false"}} {
			key, prev, r := secretKeys(t, sets...)
			if len(key) < 32 || prev != nil {
				t.Errorf("%v: generated key %d bytes, previous %q; want a random key of 32+ bytes", sets, len(key), prev)
			}
			if mount, _ := workflowMount(t, r); mount == nil {
				t.Errorf("%v: workflow key not mounted", sets)
			}
		}
		one, _, _ := secretKeys(t)
		two, _, _ := secretKeys(t)
		if one == two {
			t.Error("two installs generated the same key")
		}
	})
	t.Run("rolls the pods when the key values change", func(t *testing.T) {
		annotation := func(sets ...string) string {
			_, _, r := secretKeys(t, sets...)
			return r.objects["Deployment"].(*appsv1.Deployment).Spec.Template.Annotations["checksum/workflow-key"]
		}
		if a, b := annotation("workflow.key=a-shared-run-token-key"), annotation("workflow.key=a-shared-run-token-key", "workflow.previousKeys={retired-key-0123456789}"); a == "" || a == b {
			t.Errorf("checksum/workflow-key %q and %q: want a change when previous keys are added", a, b)
		}
	})
}
