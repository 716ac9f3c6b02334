#!/usr/bin/env bash
# Copies the sources of truth into the places that cannot read them directly (a Helm chart and a kustomize root
# only load files inside their own directory):
#   deploy/prometheus/rules.yml -> charts/llm-sidecar/files/rules.yml, deploy/kustomize/prometheusrule.yaml and
#                                  deploy/kustomize/add-to-existing/prometheusrule.yaml (PrometheusRule)
#   grafana/dashboards/*.json   -> charts/llm-sidecar/files/dashboards/ (same names, byte for byte)
# Run after every edit of rules.yml or the dashboards; OpsRulesTest, OpsManifestsTest and OpsHelmChartTest fail
# while the copies differ.
set -euo pipefail
cd "$(dirname "$0")"
chart=../../charts/llm-sidecar/files/rules.yml
mkdir -p "$(dirname "$chart")"
{
  echo "# GENERATED from deploy/prometheus/rules.yml by deploy/prometheus/sync.sh; do not edit."
  grep -v '^#' rules.yml
} > "$chart"
rule=../kustomize/prometheusrule.yaml
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
} > "$rule"
cp "$rule" ../kustomize/add-to-existing/prometheusrule.yaml
dashboards=../../charts/llm-sidecar/files/dashboards
mkdir -p "$dashboards"
# a dashboard removed from grafana/ must leave the chart too
rm -f "$dashboards"/*.json
cp ../../grafana/dashboards/*.json "$dashboards"/
echo "synced rules.yml -> $chart, $rule, ../kustomize/add-to-existing/prometheusrule.yaml;" \
  "grafana/dashboards/*.json -> $dashboards/"
