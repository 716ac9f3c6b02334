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
