// The pins of CRDs taken as published YAML from their projects' modules (no Go is built from
// them): cert-manager's deploy/crds (Issuer, ClusterIssuer, Certificate, CertificateRequest,
// Order, Challenge) and prometheus-operator's ServiceMonitor, so that the chart's optional
// objects are validated by kube-apiserver for real. tools/testenv reads them with
// `go mod download -json`, which checks each module against this go.sum.
module vmgate.invalid/testenv/crds

go 1.24.0

require (
	github.com/cert-manager/cert-manager v1.19.1
	github.com/prometheus-operator/prometheus-operator v0.85.0
)
