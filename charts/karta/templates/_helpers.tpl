{{/*
Names and labels shared by every template.
*/}}

{{- define "karta.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 40 | trimSuffix "-" -}}
{{- end -}}

{{/* The base name of every object: the release name, with the chart name unless it contains it. */}}
{{- define "karta.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 40 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "karta.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "karta.selectorLabels" -}}
app.kubernetes.io/name: {{ include "karta.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "karta.labels" -}}
helm.sh/chart: {{ include "karta.chart" . }}
{{ include "karta.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/component: controller
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "karta.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "karta.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "karta.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{/* The names the controller is given by flag, and the RBAC rules refer to. */}}
{{- define "karta.webhookService" -}}{{ include "karta.fullname" . }}-webhook{{- end -}}
{{- define "karta.certSecret" -}}{{ include "karta.fullname" . }}-webhook-cert{{- end -}}
{{- define "karta.certificate" -}}{{ include "karta.fullname" . }}-webhook{{- end -}}
{{- define "karta.mutatingWebhook" -}}{{ include "karta.fullname" . }}-mutating{{- end -}}
{{- define "karta.validatingWebhook" -}}{{ include "karta.fullname" . }}-validating{{- end -}}
{{- define "karta.lease" -}}{{ include "karta.fullname" . }}-leader{{- end -}}
{{- define "karta.certMode" -}}{{ if eq .Values.webhook.certificates "auto" }}auto{{ else }}manual{{ end }}{{- end -}}

{{/* A webhook's clientConfig: the webhook Service on port 443 (as karta.controller.webhook.registration). */}}
{{- define "karta.clientConfig" -}}
service:
  name: {{ include "karta.webhookService" .root }}
  namespace: {{ .root.Release.Namespace }}
  path: {{ .path }}
  port: 443
{{- end -}}

{{/* cert-manager's cainjector fills caBundle from the Certificate's Secret. */}}
{{- define "karta.injectCA" -}}
cert-manager.io/inject-ca-from: {{ .Release.Namespace }}/{{ include "karta.certificate" . }}
{{- end -}}

{{/* Checks the schema cannot express. */}}
{{- define "karta.validate" -}}
{{- $le := .Values.leaderElection -}}
{{- if and $le.enabled (not (and (gt (float64 $le.leaseDuration) (float64 $le.renewDeadline)) (gt (float64 $le.renewDeadline) (mulf 1.2 (float64 $le.retryPeriod))))) -}}
{{- fail (printf "leaderElection: leaseDuration (%v) must exceed renewDeadline (%v), which must exceed 1.2 x retryPeriod (%v)" $le.leaseDuration $le.renewDeadline $le.retryPeriod) -}}
{{- end -}}
{{- end -}}
