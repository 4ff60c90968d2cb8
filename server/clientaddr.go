package server

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// trustedProxies are the networks (listen.trusted_proxies) whose
// forwarding headers are believed. Behind an Ingress every connection
// comes from the proxy; without this every anonymous caller would be one
// caller (one rate bucket, one stream cap).
type trustedProxies []netip.Prefix

// parseTrustedProxies reads CIDRs or single addresses.
func parseTrustedProxies(list []string) (trustedProxies, error) {
	var out trustedProxies
	for _, s := range list {
		s = strings.TrimSpace(s)
		if p, err := netip.ParsePrefix(s); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(s)
		if err != nil {
			return nil, fmt.Errorf("listen.trusted_proxies: %q is neither a CIDR (10.0.0.0/8) nor an address", s)
		}
		out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	return out, nil
}

func (t trustedProxies) trusts(a netip.Addr) bool {
	a = a.Unmap()
	for _, p := range t {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// clientAddr is the address a request came from: the peer, or, when the
// peer is a trusted proxy, the rightmost hop of X-Forwarded-For (else of
// Forwarded) that is not itself a trusted proxy. Hops to the left of that
// one were written by the client and prove nothing. A hop that does not
// parse stops the walk there: it is the client as far as can be told.
func (t trustedProxies) clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	if len(t) == 0 {
		return host
	}
	peer, err := netip.ParseAddr(host)
	if err != nil || !t.trusts(peer) {
		return host
	}
	hops := forwardedFor(r.Header)
	client := host
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(hops[i])
		if err != nil {
			if hops[i] == "" {
				return client
			}
			return hops[i]
		}
		client = a.Unmap().String()
		if !t.trusts(a) {
			return client
		}
	}
	// Every hop is a trusted proxy: the leftmost is the nearest to the
	// client there is.
	return client
}

// forwardedFor lists the hops a request passed through, client first:
// X-Forwarded-For when present (what nginx, HAProxy, Envoy and cloud load
// balancers append to), else the for= parameters of RFC 7239 Forwarded.
// Ports and brackets are removed.
func forwardedFor(h http.Header) []string {
	var hops []string
	if xff := h.Values("X-Forwarded-For"); len(xff) > 0 {
		for _, line := range xff {
			for _, hop := range strings.Split(line, ",") {
				hops = append(hops, bareHost(strings.TrimSpace(hop)))
			}
		}
		return hops
	}
	for _, line := range h.Values("Forwarded") {
		for _, elem := range strings.Split(line, ",") {
			for _, pair := range strings.Split(elem, ";") {
				k, v, ok := strings.Cut(strings.TrimSpace(pair), "=")
				if ok && strings.EqualFold(k, "for") {
					hops = append(hops, bareHost(strings.Trim(v, `"`)))
				}
			}
		}
	}
	return hops
}

// bareHost strips a port and IPv6 brackets: "[2001:db8::1]:443" and
// "192.0.2.1:80" become the address alone.
func bareHost(s string) string {
	if h, _, err := net.SplitHostPort(s); err == nil {
		return h
	}
	return strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
}
