{{/* The post-install notes, a named template so tests can render them (helm template skips NOTES.txt). */}}
{{- define "cursus-mcp.notes" -}}
cursus MCP server {{ .Chart.AppVersion }} is installed as {{ include "cursus-mcp.fullname" . }} in namespace {{ .Release.Namespace }}.

{{- $auth := "" }}
{{- if include "cursus-mcp.authEnabled" . }}
{{- $auth = " -H \"Authorization: Bearer $CURSUS_TOKEN\"" }}
{{- end }}
{{- if .Values.ingress.enabled }}
{{- $url := include "cursus-mcp.publicURL" . }}

MCP endpoint (streamable HTTP):  {{ $url }}/mcp
{{- if .Values.config.mcp.legacySSE }}
Legacy SSE endpoint:             {{ $url }}/sse
{{- end }}

Try it:
  curl -s -X POST {{ $url }}/call/tools__help{{ $auth }} -d '{}'

Connect Claude Code:
  claude mcp add --transport http cursus {{ $url }}/mcp{{ if $auth }} --header "Authorization: Bearer $CURSUS_TOKEN"{{ end }}
{{- else }}

The service is cluster-internal ({{ include "cursus-mcp.fullname" . }}.{{ .Release.Namespace }}.svc:{{ .Values.service.port }}).
Reach it from your machine with:
  kubectl -n {{ .Release.Namespace }} port-forward svc/{{ include "cursus-mcp.fullname" . }} 8080:{{ .Values.service.port }}

MCP endpoint (streamable HTTP):  http://127.0.0.1:8080/mcp

Try it:
  curl -s -X POST http://127.0.0.1:8080/call/tools__help{{ $auth }} -d '{}'
{{- end }}

Remote callers may run: read-only tools
{{- if .Values.config.gates.enableDestructive }}, destructive and file-writing tools{{ end }}
{{- if .Values.config.gates.allowScriptExec }}, script-executing tools{{ end }}
{{- if include "cursus-mcp.authEnabled" . }} (callers need the matching token scopes){{ end }}.
{{- if not (include "cursus-mcp.authEnabled" .) }}
Authentication is OFF: anyone who can reach the service can call the read-only tools.
{{- end }}
{{- end }}
