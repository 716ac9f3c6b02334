#!/usr/bin/env bash
# Copies deploy/prometheus/rules.yml (the source of truth) into the kustomize PrometheusRule and the Helm chart.
# Run after every edit of rules.yml; OpsManifestsTest fails while the copies differ.
set -euo pipefail
cd "$(dirname "$0")"
chart=../../charts/llm-sidecar/files/rules.yml
mkdir -p "$(dirname "$chart")"
{
  echo "# GENERATED from deploy/prometheus/rules.yml by deploy/prometheus/sync.sh; do not edit."
  grep -v '^#' rules.yml
} > "$chart"
{
  cat <<'HEAD'
# GENERATED from deploy/prometheus/rules.yml by deploy/prometheus/sync.sh; do not edit.
apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: llm-sidecar
  labels:
    app.kubernetes.io/name: llm-sidecar
    role: alert-rules
spec:
HEAD
  grep -v '^#' rules.yml | sed 's/^/  /'
} > ../kustomize/prometheusrule.yaml
echo "synced rules.yml -> $chart, ../kustomize/prometheusrule.yaml"
