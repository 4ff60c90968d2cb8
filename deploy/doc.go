// Package deploy holds the deployment assets (example config, Grafana
// dashboard, Prometheus rules, MCP client configs) and the tests that keep
// them, the Dockerfile and the Helm chart honest. It has no runtime code.
package deploy
