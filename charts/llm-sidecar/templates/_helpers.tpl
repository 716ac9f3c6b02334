{{- define "llm-sidecar.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "llm-sidecar.fullname" -}}
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

{{- define "llm-sidecar.selectorLabels" -}}
app.kubernetes.io/name: {{ include "llm-sidecar.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "llm-sidecar.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "llm-sidecar.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "llm-sidecar.upstreamUrl" -}}
{{- if .Values.upstream.url }}{{ .Values.upstream.url }}{{ else }}{{ printf "http://127.0.0.1:%v" .Values.engine.port }}{{ end }}
{{- end }}

{{- define "llm-sidecar.engineHealthProbe" -}}
exec:
  command:
    - python3
    - -c
    - {{ printf "import urllib.request; urllib.request.urlopen('http://127.0.0.1:%v/health', timeout=3)" .Values.engine.port | quote }}
{{- end }}

{{- define "llm-sidecar.image" -}}
{{- $repository := required "image.repository is required: no image is published; build sidecar/src/main/docker/Dockerfile.jvm and push it to your registry (docs/deployment.md)" .Values.image.repository }}
{{- printf "%s:%s" $repository (.Values.image.tag | default .Chart.AppVersion) }}
{{- end }}

{{/*
"true" when a Prometheus Operator object is to be rendered: enabled auto (only if the cluster serves
monitoring.coreos.com/v1/<kind>), true or false. Call with (dict "root" $ "key" "serviceMonitor.enabled" "enabled"
.Values.serviceMonitor.enabled "kind" "ServiceMonitor").
*/}}
{{- define "llm-sidecar.crdEnabled" -}}
{{- $enabled := toString .enabled }}
{{- if eq $enabled "auto" }}
{{- if .root.Capabilities.APIVersions.Has (printf "monitoring.coreos.com/v1/%s" .kind) }}true{{ end }}
{{- else if eq $enabled "true" }}true
{{- else if ne $enabled "false" }}
{{- fail (printf "%s must be auto, true or false, not %q" .key $enabled) }}
{{- end }}
{{- end }}

{{- define "llm-sidecar.serviceMonitorEnabled" -}}
{{- include "llm-sidecar.crdEnabled" (dict "root" . "key" "serviceMonitor.enabled" "enabled" .Values.serviceMonitor.enabled "kind" "ServiceMonitor") }}
{{- end }}

{{- define "llm-sidecar.podMonitorEnabled" -}}
{{- include "llm-sidecar.crdEnabled" (dict "root" . "key" "podMonitor.enabled" "enabled" .Values.podMonitor.enabled "kind" "PodMonitor") }}
{{- end }}

{{- define "llm-sidecar.prometheusRulesEnabled" -}}
{{- include "llm-sidecar.crdEnabled" (dict "root" . "key" "prometheusRules.enabled" "enabled" .Values.prometheusRules.enabled "kind" "PrometheusRule") }}
{{- end }}

{{/* Seconds of the pod's shutdown: explicit terminationGracePeriodSeconds (checked) or preStop + grace + 10. */}}
{{- define "llm-sidecar.terminationGracePeriodSeconds" -}}
{{- $minimum := add (int .Values.drain.preStopSeconds) (int .Values.drain.graceSeconds) 5 }}
{{- $explicit := toString .Values.terminationGracePeriodSeconds }}
{{- if and (ne $explicit "") (ne $explicit "<nil>") }}
{{- if lt (int .Values.terminationGracePeriodSeconds) $minimum }}
{{- fail (printf "terminationGracePeriodSeconds=%s is below drain.preStopSeconds + drain.graceSeconds + 5 = %d: the kubelet would kill the pod while the sidecar still drains streams; raise it or leave it empty (derived)" $explicit $minimum) }}
{{- end }}
{{- int .Values.terminationGracePeriodSeconds }}
{{- else }}
{{- add $minimum 5 }}
{{- end }}
{{- end }}

{{- define "llm-sidecar.modelCacheClaim" -}}
{{- .Values.engine.modelCache.persistentVolumeClaim.existingClaim | default (printf "%s-model-cache" (include "llm-sidecar.fullname" .)) }}
{{- end }}

{{/* Native-histogram scraping fields of a ServiceMonitor / PodMonitor spec (docs/metrics.md, "Native histograms"). */}}
{{- define "llm-sidecar.nativeHistogramScrape" -}}
{{- with .Values.nativeHistogramScrape }}
{{- if .enabled -}}
# protobuf first: the only format that carries native histograms
scrapeProtocols: [PrometheusProto, OpenMetricsText1.0.0, OpenMetricsText0.0.1, PrometheusText0.0.4]
scrapeNativeHistograms: true
{{- if .scrapeClassicHistograms }}
scrapeClassicHistograms: true
{{- end }}
{{- if .bucketLimit }}
nativeHistogramBucketLimit: {{ .bucketLimit }}
{{- end }}
{{- end }}
{{- end }}
{{- end -}}

{{/* The trace files' claim: an existing one, or <fullname>-traces. */}}
{{- define "llm-sidecar.traceClaim" -}}
{{- .Values.trace.volume.persistentVolumeClaim.existingClaim | default (printf "%s-traces" (include "llm-sidecar.fullname" .)) }}
{{- end }}

{{/*
A Kubernetes quantity (e.g. 2Gi, 500M, 1048576) as bytes, for the checks that compare sizes: binary (Ki Mi Gi Ti) and
decimal (k M G T) suffixes; fails on anything else.
*/}}
{{- define "llm-sidecar.bytes" -}}
{{- $q := toString . -}}
{{- $units := dict "Ki" 1024 "Mi" 1048576 "Gi" 1073741824 "Ti" 1099511627776 "k" 1000 "M" 1000000 "G" 1000000000 "T" 1000000000000 -}}
{{- $n := regexFind "^[0-9]+" $q -}}
{{- $unit := trimPrefix $n $q -}}
{{- if not $n -}}
{{- fail (printf "not a size: %s" $q) -}}
{{- else if not $unit -}}
{{- $n -}}
{{- else if hasKey $units $unit -}}
{{- mul (int64 $n) (get $units $unit) -}}
{{- else -}}
{{- fail (printf "not a size: %s (a whole number with Ki, Mi, Gi, Ti, k, M, G or T)" $q) -}}
{{- end -}}
{{- end -}}
