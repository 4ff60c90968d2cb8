package deploy

import (
	"slices"
	"testing"
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
