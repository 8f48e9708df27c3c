{{/*
The chart's name, or nameOverride.
*/}}
{{- define "metrics-scheduler.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
The name of the release's objects: fullnameOverride, else the release name
when it contains the chart's name, else "RELEASE-NAME". Truncated to 63
characters, the longest a label value or DNS name may be.
*/}}
{{- define "metrics-scheduler.fullname" -}}
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

{{/*
Labels of every object.
*/}}
{{- define "metrics-scheduler.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "metrics-scheduler.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/*
The labels that select the scheduler's pods (Deployment, Service, PDB,
anti-affinity); immutable in a Deployment's selector.
*/}}
{{- define "metrics-scheduler.selectorLabels" -}}
app.kubernetes.io/name: {{ include "metrics-scheduler.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/*
The ConfigMap holding config.yaml: an existing one, or the chart's.
*/}}
{{- define "metrics-scheduler.configMapName" -}}
{{- .Values.config.existingConfigMap | default (printf "%s-config" (include "metrics-scheduler.fullname" .)) }}
{{- end }}

{{/*
The Secret holding the metrics API token: an existing one, or the chart's.
*/}}
{{- define "metrics-scheduler.secretName" -}}
{{- .Values.metricsToken.existingSecret | default (printf "%s-metrics-token" (include "metrics-scheduler.fullname" .)) }}
{{- end }}

{{/*
The Lease name, checked: the Role's resourceNames, the configuration and
--lease-name all take it from here.
*/}}
{{- define "metrics-scheduler.leaseName" -}}
{{- required "leaderElection.leaseName must be set" .Values.leaderElection.leaseName }}
{{- end }}

{{/*
The configuration the chart writes: config.inline with the Lease and the
listen address the rest of the chart relies on.
*/}}
{{- define "metrics-scheduler.config" -}}
{{- $fixed := dict
      "leaderElection" (dict "leaseName" (include "metrics-scheduler.leaseName" .) "leaseNamespace" .Release.Namespace)
      "http" (dict "listenAddress" ":10260") }}
{{- mergeOverwrite (deepCopy .Values.config.inline) $fixed | toYaml }}
{{- end }}

{{/*
PromQL label matchers of the scheduler's own series.
*/}}
{{- define "metrics-scheduler.seriesSelector" -}}
{{- .Values.prometheusRule.selector | default (printf "job=%q, namespace=%q" (include "metrics-scheduler.fullname" .) .Release.Namespace) }}
{{- end }}
