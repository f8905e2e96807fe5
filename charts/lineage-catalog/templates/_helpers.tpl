{{/* Names and labels ---------------------------------------------------------------- */}}
{{- define "lineage-catalog.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "lineage-catalog.fullname" -}}
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

{{- define "lineage-catalog.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "lineage-catalog.labels" -}}
helm.sh/chart: {{ include "lineage-catalog.chart" . }}
app.kubernetes.io/name: {{ include "lineage-catalog.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: lineage-catalog
{{- end }}

{{/* Selector labels of one component: call with (dict "root" $ "component" "web"). */}}
{{- define "lineage-catalog.selectorLabels" -}}
app.kubernetes.io/name: {{ include "lineage-catalog.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{- define "lineage-catalog.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "lineage-catalog.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The port the web container listens on: its containerPort, PORT and the NetworkPolicy's. */}}
{{- define "lineage-catalog.webPort" -}}
8000
{{- end }}

{{- define "lineage-catalog.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{/* The Secret the pods read: the operator's, or the chart's. */}}
{{- define "lineage-catalog.secretName" -}}
{{- default (include "lineage-catalog.fullname" .) .Values.existingSecret }}
{{- end }}

{{/* The Secret the migration hook reads: it runs before the chart's own Secret exists. */}}
{{- define "lineage-catalog.hookSecretName" -}}
{{- if .Values.existingSecret }}
{{- .Values.existingSecret }}
{{- else }}
{{- printf "%s-migrate" (include "lineage-catalog.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{/* Host names Django answers to: the Service's DNS names, the ingress hosts, the rest. */}}
{{- define "lineage-catalog.allowedHosts" -}}
{{- $fullname := include "lineage-catalog.fullname" . }}
{{- $hosts := list $fullname (printf "%s.%s" $fullname .Release.Namespace) (printf "%s.%s.svc" $fullname .Release.Namespace) (printf "%s.%s.svc.cluster.local" $fullname .Release.Namespace) "localhost" "127.0.0.1" }}
{{- if .Values.ingress.enabled }}
{{- range .Values.ingress.hosts }}
{{- $hosts = append $hosts .host }}
{{- end }}
{{- end }}
{{- $hosts = concat $hosts .Values.django.allowedHosts }}
{{- join "," (uniq $hosts) }}
{{- end }}

{{/* Non-secret settings, as a map: the ConfigMap holds them, the hook Job inlines them. */}}
{{- define "lineage-catalog.configData" -}}
DJANGO_SETTINGS_MODULE: config.settings.production
DJANGO_ALLOWED_HOSTS: {{ include "lineage-catalog.allowedHosts" . | quote }}
DJANGO_CSRF_TRUSTED_ORIGINS: {{ join "," .Values.django.csrfTrustedOrigins | quote }}
DJANGO_TRUST_X_FORWARDED_PROTO: {{ .Values.django.trustXForwardedProto | quote }}
DJANGO_NUM_PROXIES: {{ .Values.django.numProxies | int64 | quote }}
DJANGO_SECURE_SSL_REDIRECT: {{ .Values.django.secureSslRedirect | quote }}
DJANGO_SECURE_COOKIES: {{ .Values.django.secureCookies | quote }}
DJANGO_HSTS_SECONDS: {{ .Values.django.hstsSeconds | int64 | quote }}
DJANGO_HSTS_INCLUDE_SUBDOMAINS: {{ .Values.django.hstsIncludeSubdomains | quote }}
DJANGO_HSTS_PRELOAD: {{ .Values.django.hstsPreload | quote }}
LOG_LEVEL: {{ .Values.django.logLevel | quote }}
LOG_FORMAT: "json"
DATABASE_CONN_MAX_AGE: {{ .Values.database.connMaxAge | int64 | quote }}
DATABASE_CONNECT_TIMEOUT: {{ .Values.database.connectTimeout | int64 | quote }}
LINEAGE_READ_STATEMENT_TIMEOUT_MS: {{ .Values.database.readStatementTimeoutMs | int64 | quote }}
LINEAGE_MAX_REQUEST_BYTES: {{ .Values.ingest.maxRequestBytes | int64 | quote }}
LINEAGE_MAX_BATCH_EVENTS: {{ .Values.ingest.maxBatchEvents | int64 | quote }}
WEB_WORKERS: {{ .Values.web.server.workers | int64 | quote }}
WEB_THREADS: {{ .Values.web.server.threads | int64 | quote }}
WEB_MAX_RSS_MIB: {{ .Values.web.server.maxRssMiB | int64 | quote }}
WEB_ACCESS_LOG: {{ .Values.web.server.accessLog | toString | quote }}
WEB_HEADER_READ_SECONDS: {{ .Values.web.server.headerReadSeconds | int64 | quote }}
{{- /* Workers finish their requests and are killed before Kubernetes kills the pod. */}}
WEB_GRACEFUL_SECONDS: {{ max 1 (sub (int64 .Values.web.terminationGracePeriodSeconds) 5) | quote }}
{{- range $name, $value := .Values.django.extraEnv }}
{{ $name }}: {{ $value | toString | quote }}
{{- end }}
{{- end }}

{{/* Environment from the Secret: the three required keys and the optional initial tokens. */}}
{{- define "lineage-catalog.secretEnv" -}}
{{- $secret := .secret }}
- name: DATABASE_URL
  valueFrom:
    secretKeyRef:
      name: {{ $secret }}
      key: DATABASE_URL
- name: REDIS_URL
  valueFrom:
    secretKeyRef:
      name: {{ $secret }}
      key: REDIS_URL
- name: DJANGO_SECRET_KEY
  valueFrom:
    secretKeyRef:
      name: {{ $secret }}
      key: DJANGO_SECRET_KEY
{{- end }}

{{/* Pod-level settings shared by every workload: call with (dict "root" $ "values" .Values.web). */}}
{{- define "lineage-catalog.podSpecCommon" -}}
{{- with .root.Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
automountServiceAccountToken: false
{{- /* No *_SERVICE_HOST/_PORT variable per Service of the namespace: nothing reads them,
  and the web server copies the environment into every request (ADR 0052). */}}
enableServiceLinks: false
securityContext:
  {{- toYaml .root.Values.podSecurityContext | nindent 2 }}
{{- with .values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{/* The writable /tmp every container gets (the root filesystem is read-only). */}}
{{- define "lineage-catalog.tmpVolume" -}}
- name: tmp
  emptyDir:
    medium: Memory
    sizeLimit: {{ .Values.tmpSizeLimit }}
{{- end }}

{{/* Annotations that roll the pods when their configuration changes. */}}
{{- define "lineage-catalog.checksums" -}}
checksum/config: {{ include "lineage-catalog.configData" . | sha256sum }}
{{- if not .Values.existingSecret }}
checksum/secret: {{ include (print $.Template.BasePath "/secret.yaml") . | sha256sum }}
{{- end }}
{{- end }}

{{/* Django's secret key: the given one, else the one already installed, else a new one.
     Generated once per render and shared by the Secret and the hook's Secret. */}}
{{- define "lineage-catalog.secretKey" -}}
{{- if .Values.secretKey }}
{{- .Values.secretKey }}
{{- else }}
{{- if not (hasKey .Values "_generatedSecretKey") }}
{{- $generated := randAlphaNum 64 }}
{{- $existing := lookup "v1" "Secret" .Release.Namespace (include "lineage-catalog.fullname" .) }}
{{- if and $existing $existing.data (hasKey $existing.data "DJANGO_SECRET_KEY") }}
{{- $generated = index $existing.data "DJANGO_SECRET_KEY" | b64dec }}
{{- end }}
{{- $_ := set .Values "_generatedSecretKey" $generated }}
{{- end }}
{{- index .Values "_generatedSecretKey" }}
{{- end }}
{{- end }}

{{/* The data of the chart's Secret (the main one and the hook's copy). */}}
{{- define "lineage-catalog.secretData" -}}
DATABASE_URL: {{ .Values.database.url | b64enc | quote }}
REDIS_URL: {{ .Values.redis.url | b64enc | quote }}
DJANGO_SECRET_KEY: {{ include "lineage-catalog.secretKey" . | b64enc | quote }}
{{- with .Values.initialTokens.ingest }}
LINEAGE_INITIAL_INGEST_TOKEN: {{ . | b64enc | quote }}
{{- end }}
{{- with .Values.initialTokens.read }}
LINEAGE_INITIAL_READ_TOKEN: {{ . | b64enc | quote }}
{{- end }}
{{- end }}

{{/* Non-empty when an ingress path would send /metrics to the pods: an Exact /metrics; any
other path that /metrics starts with, by characters (/, /m, /metric, /metrics/: a trailing
slash changes nothing), because not every controller matches by whole path elements as the
Ingress spec's Prefix does (ingress-nginx's ImplementationSpecific is nginx's own prefix
match, so "/m" routes /metrics; ADR 0171); an ImplementationSpecific path that may be a
pattern (nginx reads those as regular expressions). Compared in lower case: with
ingress-nginx's use-regex every path of the host becomes a case-insensitive pattern. */}}
{{- define "lineage-catalog.routesMetrics" -}}
{{- $path := .path | trimSuffix "/" | lower }}
{{- if eq .pathType "Exact" }}
{{- if eq $path "/metrics" }}yes{{ end }}
{{- else if hasPrefix $path "/metrics" }}yes
{{- else if and (eq .pathType "ImplementationSpecific") (regexMatch "[.*+?()\\[\\]{}|^$]" .path) }}yes
{{- end }}
{{- end }}
