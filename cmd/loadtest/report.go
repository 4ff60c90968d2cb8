package main

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"time"
)

// percentile is the nearest-rank percentile of sorted durations.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(p/100*float64(len(sorted))+0.999999) - 1
	return sorted[max(0, min(rank, len(sorted)-1))]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.3fms", float64(d.Microseconds())/1000) }

func mib(b float64) string {
	if b < 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.1f MiB", b/(1<<20))
}

func count(v float64) string {
	if v < 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.0f", v)
}

func report(w io.Writer, o options, r *results, elapsed time.Duration, before, after, settled serverStats) {
	var all []time.Duration
	var total int64
	fmt.Fprintf(w, "loadtest %s: mode=%s clients=%d duration=%s requests<=%d tool=%s\n",
		o.url, o.mode, o.clients, elapsed.Round(time.Millisecond), o.requests, o.tool)
	fmt.Fprintf(w, "%-12s %10s %10s %10s %10s %10s %10s\n", "op", "count", "rps", "p50", "p95", "p99", "max")
	for _, kind := range opOrder {
		lat := r.latencies[kind]
		if len(lat) == 0 {
			continue
		}
		slices.Sort(lat)
		// Closing a session is clean-up outside the budget, not load.
		if kind != opClose {
			all = append(all, lat...)
			total += int64(len(lat))
		}
		fmt.Fprintf(w, "%-12s %10d %10.0f %10s %10s %10s %10s\n", kind, len(lat), float64(len(lat))/elapsed.Seconds(),
			ms(percentile(lat, 50)), ms(percentile(lat, 95)), ms(percentile(lat, 99)), ms(lat[len(lat)-1]))
	}
	slices.Sort(all)
	if len(all) > 0 {
		fmt.Fprintf(w, "%-12s %10d %10.0f %10s %10s %10s %10s\n", "all", total, float64(total)/elapsed.Seconds(),
			ms(percentile(all, 50)), ms(percentile(all, 95)), ms(percentile(all, 99)), ms(all[len(all)-1]))
	}
	fmt.Fprintf(w, "sessions: %d\n", r.sessions)
	classes := make([]string, 0, len(r.errors))
	var errs int64
	for c, n := range r.errors {
		classes = append(classes, c)
		errs += n
	}
	sort.Strings(classes)
	fmt.Fprintf(w, "errors: %d", errs)
	for _, c := range classes {
		fmt.Fprintf(w, "  %s=%d", c, r.errors[c])
	}
	fmt.Fprintf(w, "  (transport errors: %d)\n", r.errors[errTransport])
	fmt.Fprintf(w, "server (%s): rss %s -> %s -> %s settled; goroutines %s -> %s -> %s settled",
		before.Source, mib(before.RSSBytes), mib(after.RSSBytes), mib(settled.RSSBytes),
		count(before.Goroutines), count(after.Goroutines), count(settled.Goroutines))
	if before.Goroutines >= 0 && settled.Goroutines >= 0 {
		back := settled.Goroutines <= before.Goroutines+goroutineSlack
		fmt.Fprintf(w, " (back to baseline: %v)", back)
	}
	fmt.Fprintln(w)
}
