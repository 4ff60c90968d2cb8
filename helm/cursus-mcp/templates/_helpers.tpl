{{/* Chart name, truncated to the 63 characters Kubernetes names allow. */}}
{{- define "cursus-mcp.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Full name of the release's objects. */}}
{{- define "cursus-mcp.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "cursus-mcp.selectorLabels" -}}
app.kubernetes.io/name: {{ include "cursus-mcp.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "cursus-mcp.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "cursus-mcp.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: cursus
{{- end }}

{{- define "cursus-mcp.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "cursus-mcp.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "cursus-mcp.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
{{- end }}

{{/* "true" when callers must authenticate (bearer tokens or OIDC). */}}
{{- define "cursus-mcp.authEnabled" -}}
{{- if or .Values.auth.tokens.enabled .Values.auth.oidc.issuer }}true{{ end }}
{{- end }}

{{/* "true" when remote callers may run gated (writing or executing) tools. */}}
{{- define "cursus-mcp.gatesOpen" -}}
{{- if or .Values.config.gates.enableDestructive .Values.config.gates.allowScriptExec }}true{{ end }}
{{- end }}

{{- define "cursus-mcp.tokensSecretName" -}}
{{- default (printf "%s-tokens" (include "cursus-mcp.fullname" .)) .Values.auth.tokens.existingSecret }}
{{- end }}

{{- define "cursus-mcp.workflowSecretName" -}}
{{- default (printf "%s-workflow" (include "cursus-mcp.fullname" .)) .Values.workflow.existingSecret }}
{{- end }}

{{/* The key in the workflow Secret holding previous keys ("" when none are configured). */}}
{{- define "cursus-mcp.workflowPreviousKey" -}}
{{- if .Values.workflow.existingSecret }}{{ .Values.workflow.previousSecretKey }}
{{- else if .Values.workflow.previousKeys }}{{ .Values.workflow.previousSecretKey | default "previous" }}
{{- end }}
{{- end }}

{{/* The most pods that can run at once: replicaCount, or autoscaling.maxReplicas. */}}
{{- define "cursus-mcp.maxPods" -}}
{{- if .Values.autoscaling.enabled }}{{ int .Values.autoscaling.maxReplicas }}{{ else }}{{ int .Values.replicaCount }}{{ end }}
{{- end }}

{{/* The fewest pods that run: replicaCount, or autoscaling.minReplicas. */}}
{{- define "cursus-mcp.minPods" -}}
{{- if .Values.autoscaling.enabled }}{{ int .Values.autoscaling.minReplicas }}{{ else }}{{ int .Values.replicaCount }}{{ end }}
{{- end }}

{{/*
Refuses the combinations that break with more than one replica, naming the
values to set: per-pod transports without session affinity or a shared
store (redis.address), and a
writable workspace that is not one volume shared by every pod.
*/}}
{{- define "cursus-mcp.checkReplicas" -}}
{{- $c := .Values.config }}
{{- $pods := int (include "cursus-mcp.maxPods" .) }}
{{- if gt $pods 1 }}
{{- $perPod := list }}
{{- if $c.mcp.legacySSE }}{{ $perPod = append $perPod "config.mcp.legacySSE (on by default)" }}{{ end }}
{{- if $c.mcp.stateful }}{{ $perPod = append $perPod "config.mcp.stateful" }}{{ end }}
{{- if and $perPod (ne .Values.service.sessionAffinity "ClientIP") (not .Values.redis.address) }}
{{- fail (printf "%s keeps state in the pod that opened it (a legacy SSE stream, a stateful session), and up to %d replicas run (replicaCount or autoscaling.maxReplicas): a request round-robined to another pod finds nothing there. Set %s to false (clients then use the stateless streamable HTTP transport at /mcp), or set redis.address (a Redis through which every pod serves every session and SSE stream), or set service.sessionAffinity=ClientIP (with the Ingress on, make the Ingress sticky as well), or run one replica" (join " and " $perPod) $pods (join " and " (list "config.mcp.legacySSE" "config.mcp.stateful"))) }}
{{- end }}
{{- if $c.gates.enableDestructive }}
{{- $vol := .Values.workspace.volume }}
{{- if or (not $vol) (hasKey $vol "emptyDir") (not .Values.workspace.readWriteMany) }}
{{- fail (printf "config.gates.enableDestructive writes to /workspace, and up to %d replicas run (replicaCount or autoscaling.maxReplicas): with a volume of its own per pod, a file written through one replica is missing on the others. Set workspace.volume to a ReadWriteMany volume every replica mounts (e.g. a persistentVolumeClaim of an RWX storage class, NFS or EFS) and workspace.readWriteMany=true, or run one replica" $pods) }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}

{{/* limits.rate_per_minute for one pod: config.limits.ratePerMinute is the budget of a caller across all replicas. With redis.address the pods share one budget in Redis and each gets the whole; otherwise each of the most pods that can run gets its share (at least 1; 0 stays off). */}}
{{- define "cursus-mcp.ratePerPod" -}}
{{- $rate := int .Values.config.limits.ratePerMinute }}
{{- if and (gt $rate 0) (not .Values.redis.address) }}{{ $rate = max 1 (div $rate (int (include "cursus-mcp.maxPods" .))) }}{{ end }}
{{- $rate }}
{{- end }}

{{/* listen.trusted_proxies: the values', else the private ranges an in-cluster Ingress controller runs in when the Ingress is on. */}}
{{- define "cursus-mcp.trustedProxies" -}}
{{- $p := .Values.config.listen.trustedProxies }}
{{- if and (not $p) .Values.ingress.enabled }}
{{- $p = list "10.0.0.0/8" "172.16.0.0/12" "192.168.0.0/16" "fc00::/7" }}
{{- end }}
{{- toYaml (default list $p) }}
{{- end }}

{{/* Public base URL when the ingress is on ("" otherwise). */}}
{{- define "cursus-mcp.publicURL" -}}
{{- if .Values.ingress.enabled }}
{{- printf "%s://%s" (ternary "https" "http" .Values.ingress.tls.enabled) .Values.ingress.host }}
{{- end }}
{{- end }}

{{/* Where the container mounts things. */}}
{{- define "cursus-mcp.configDir" -}}/etc/cursus{{- end }}
{{- define "cursus-mcp.authDir" -}}/etc/cursus/auth{{- end }}
{{- define "cursus-mcp.workflowDir" -}}/etc/cursus/workflow{{- end }}
{{- define "cursus-mcp.catalogDir" -}}/etc/cursus/catalogs{{- end }}

{{/*
The deployment config file (server.Config, snake_case keys). Gated tools on
a pod network need authentication: the server refuses to start without it,
so the chart refuses to render instead of shipping a crash-looping pod.
*/}}
{{- define "cursus-mcp.config" -}}
{{- if and (include "cursus-mcp.gatesOpen" .) (not (include "cursus-mcp.authEnabled" .)) (not .Values.config.listen.allowUnauthenticatedRemote) }}
{{- fail "config.gates.enableDestructive/allowScriptExec need authentication: set auth.tokens.enabled or auth.oidc.issuer (or, only behind an authenticating gateway, config.listen.allowUnauthenticatedRemote=true)" }}
{{- end }}
{{- include "cursus-mcp.checkReplicas" . }}
{{- $c := .Values.config }}
{{- $stepDirs := list }}
{{- range .Values.catalogs.steps }}
{{- $stepDirs = append $stepDirs (printf "%s/steps/%s" (include "cursus-mcp.catalogDir" $) .name) }}
{{- end }}
{{- $pipelineDirs := list }}
{{- range .Values.catalogs.pipelines }}
{{- $pipelineDirs = append $pipelineDirs (printf "%s/pipelines/%s" (include "cursus-mcp.catalogDir" $) .name) }}
{{- end }}
{{- $mcp := dict
  "stateful" $c.mcp.stateful
  "session_idle_ttl" $c.mcp.sessionIdleTTL
  "session_unused_ttl" $c.mcp.sessionUnusedTTL
  "legacy_sse" $c.mcp.legacySSE
  "heartbeat_period" $c.mcp.heartbeatPeriod
  "tool_list" (default "lean" $c.mcp.toolList)
  "toolsets" (default list $c.mcp.toolsets)
}}
{{- with $c.mcp.allowedOrigins }}
{{- $_ := set $mcp "allowed_origins" . }}
{{- end }}
{{- with (default (include "cursus-mcp.publicURL" .) $c.mcp.baseURL) }}
{{- $_ := set $mcp "base_url" . }}
{{- end }}
{{- $auth := dict }}
{{- if .Values.auth.tokens.enabled }}
{{- $_ := set $auth "tokens_file" (printf "%s/%s" (include "cursus-mcp.authDir" .) .Values.auth.tokens.secretKey) }}
{{- end }}
{{- if and .Values.auth.oidc.issuer (not .Values.auth.oidc.audience) (not .Values.auth.resourceURL) }}
{{- fail "auth.oidc.issuer needs auth.oidc.audience (or auth.resourceURL, which is then the audience)" }}
{{- end }}
{{- with .Values.auth.oidc.issuer }}
{{- $oidc := dict "issuer" . "audience" $.Values.auth.oidc.audience "jwks_refresh" $.Values.auth.oidc.jwksRefresh }}
{{- with $.Values.auth.oidc.jwksURL }}{{ $_ := set $oidc "jwks_url" . }}{{ end }}
{{- $_ := set $auth "oidc" $oidc }}
{{- end }}
{{- with .Values.auth.resourceURL }}
{{- $_ := set $auth "resource_url" . }}
{{- end }}
{{- $aws := dict }}
{{- with .Values.aws.region }}{{ $_ := set $aws "region" . }}{{ end }}
{{- with .Values.aws.endpoint }}{{ $_ := set $aws "endpoint" . }}{{ end }}
{{- with .Values.aws.s3Endpoint }}{{ $_ := set $aws "s3_endpoint" . }}{{ end }}
{{- with .Values.aws.sagemakerEndpoint }}{{ $_ := set $aws "sagemaker_endpoint" . }}{{ end }}
{{- $workspace := dict "root" "/workspace" "python" $c.workspace.python "allow_unisolated_scripts" (default false $c.workspace.allowUnisolatedScripts) "step_reload_interval" (default "2s" $c.workspace.stepReloadInterval) "script_max_processes" (default 1024 $c.workspace.scriptMaxProcesses) "script_memory_bytes" (default 4294967296 $c.workspace.scriptMemoryBytes) "script_cpu_weight" (default 50 $c.workspace.scriptCPUWeight) "run_pipeline_step_timeout" (default "10m" $c.workspace.runPipelineStepTimeout) "run_pipeline_max_trials" (default 2 $c.workspace.runPipelineMaxTrials) "run_pipeline_max_sample_bytes" (default 16777216 $c.workspace.runPipelineMaxSampleBytes) "run_pipeline_max_storage_bytes" (default 4294967296 $c.workspace.runPipelineMaxStorageBytes) "run_pipeline_s3" (default false $c.workspace.runPipelineS3) }}
{{- with $stepDirs }}{{ $_ := set $workspace "step_dirs" . }}{{ end }}
{{- with $pipelineDirs }}{{ $_ := set $workspace "pipeline_dirs" . }}{{ end }}
{{- $cfg := dict
  "listen" (dict
    "addr" "0.0.0.0:8080"
    "allow_unauthenticated_remote" $c.listen.allowUnauthenticatedRemote
    "shutdown_timeout" $c.listen.shutdownTimeout
    "drain_delay" $c.listen.drainDelay
    "trusted_proxies" (include "cursus-mcp.trustedProxies" . | fromYamlArray))
  "mcp" $mcp
  "gates" (dict
    "enable_destructive" $c.gates.enableDestructive
    "allow_script_exec" $c.gates.allowScriptExec
    "allow" $c.gates.allow
    "deny" $c.gates.deny)
  "workspace" $workspace
  "limits" (dict
    "max_body_bytes" $c.limits.maxBodyBytes
    "max_arg_bytes" $c.limits.maxArgBytes
    "max_arg_depth" $c.limits.maxArgDepth
    "tool_timeout" $c.limits.toolTimeout
    "tool_timeouts" $c.limits.toolTimeouts
    "rate_per_minute" (include "cursus-mcp.ratePerPod" . | int)
    "exec_concurrency" $c.limits.execConcurrency
    "exec_wait" $c.limits.execWait
    "max_calls_per_caller" $c.limits.maxCallsPerCaller
    "max_queued_per_caller" $c.limits.maxQueuedPerCaller
    "queue_wait" $c.limits.queueWait
    "max_bytes_per_caller" $c.limits.maxBytesPerCaller
    "exec_per_caller" $c.limits.execPerCaller
    "auth_failures_per_minute" $c.limits.authFailuresPerMinute
    "read_timeout" $c.limits.readTimeout
    "read_header_timeout" $c.limits.readHeaderTimeout
    "max_streams" $c.limits.maxStreams
    "max_streams_per_principal" $c.limits.maxStreamsPerPrincipal
    "max_sessions" $c.limits.maxSessions
    "max_sessions_per_principal" $c.limits.maxSessionsPerPrincipal
    "max_file_bytes" $c.limits.maxFileBytes
    "max_step_types" $c.limits.maxStepTypes
    "max_step_type_bytes" $c.limits.maxStepTypeBytes
    "max_inline_bytes" $c.limits.maxInlineBytes
    "max_inline_files" $c.limits.maxInlineFiles
    "max_inline_file_bytes" $c.limits.maxInlineFileBytes)
  "telemetry" (dict
    "log_level" $c.telemetry.logLevel
    "service_name" $c.telemetry.serviceName
    "otlp_headers" $c.telemetry.otlpHeaders
    "log_arg_bytes" $c.telemetry.logArgBytes)
}}
{{- $workflow := dict "token_ttl" .Values.workflow.tokenTTL "key_file" (printf "%s/%s" (include "cursus-mcp.workflowDir" .) .Values.workflow.secretKey) }}
{{- with include "cursus-mcp.workflowPreviousKey" . }}
{{- $_ := set $workflow "previous_keys_file" (printf "%s/%s" (include "cursus-mcp.workflowDir" $) .) }}
{{- end }}
{{- $_ := set $cfg "workflow" $workflow }}
{{- with $c.telemetry.otlpEndpoint }}{{ $_ := set $cfg.telemetry "otlp_endpoint" . }}{{ end }}
{{- with $auth }}{{ $_ := set $cfg "auth" . }}{{ end }}
{{- with $aws }}{{ $_ := set $cfg "aws" . }}{{ end }}
{{- with .Values.redis.address }}
{{- $_ := set $cfg.limits "shared_store" "redis" }}
{{- $_ := set $cfg "redis" (dict "address" . "db" $.Values.redis.db "key_prefix" $.Values.redis.keyPrefix "dial_timeout" $.Values.redis.dialTimeout "timeout" $.Values.redis.timeout) }}
{{- end }}
{{- toYaml $cfg }}
{{- end }}

{{/* One catalog volume: a ConfigMap (optionally with items) or any volume source. */}}
{{- define "cursus-mcp.catalogVolume" -}}
{{- if and .entry.configMap .entry.volume }}
{{- fail (printf "catalogs.%s[%s]: give configMap or volume, not both" .kind .entry.name) }}
{{- end -}}
- name: {{ printf "catalog-%s-%s" .kind .entry.name | trunc 63 | trimSuffix "-" }}
{{- if .entry.configMap }}
  configMap:
    name: {{ .entry.configMap }}
    {{- with .entry.items }}
    items:
      {{- toYaml . | nindent 6 }}
    {{- end }}
{{- else if .entry.volume }}
  {{- toYaml .entry.volume | nindent 2 }}
{{- else }}
{{- fail (printf "catalogs.%s[%s]: needs configMap or volume" .kind .entry.name) }}
{{- end }}
{{- end }}
