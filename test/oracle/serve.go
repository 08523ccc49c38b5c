package main

// kubevirt-oracle serve: KubeVirt's VirtualMachine and VirtualMachineInstance admission webhooks
// over HTTPS, answered by virt-api's own HTTP handlers (the Serve* functions of
// pkg/virt-api/webhooks/mutating-webhook and validating-webhook, which decode the body with
// pkg/util/webhooks.GetAdmissionReview and encode the answer), registered as
// pkg/virt-api/api.go registers them, over the cluster the --objects files describe
// (cluster.go, the same fakes as `check`). So the AdmissionReview on the wire is virt-api's;
// nothing is normalised (the firmware uuid/serial are KubeVirt's random ones).
//
// What the oracle adds around KubeVirt's handlers, none of which changes an answer KubeVirt
// gives:
//   - a body KubeVirt cannot use gets 400 as from virt-api, but with a metav1.Status saying
//     why (virt-api sends 400 with an empty body), and a body without `request` (on which
//     KubeVirt's admitters dereference nil) gets that 400 too instead of a dropped connection;
//   - any other panic in KubeVirt's code is recovered per request and answered 500 with a
//     Status naming the webhook (virt-api's net/http drops the connection: for kube-apiserver
//     both are a failed webhook call), the stack on stderr;
//   - bodies above 8 MiB get 413 (virt-api reads any size);
//   - vmgate's `/virtualmachineinstances-validate`, which KubeVirt does not have, is
//     `-validate-create` for CREATE and `-validate-update` for UPDATE; for DELETE and CONNECT,
//     for which KubeVirt registers neither and kube-apiserver calls no webhook, it allows.

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	stdlog "log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sfield "k8s.io/apimachinery/pkg/util/validation/field"

	v1 "kubevirt.io/api/core/v1"

	netadmitter "kubevirt.io/kubevirt/pkg/network/admitter"
	webhookutils "kubevirt.io/kubevirt/pkg/util/webhooks"
	validating_webhooks "kubevirt.io/kubevirt/pkg/util/webhooks/validating-webhooks"
	mutating_webhook "kubevirt.io/kubevirt/pkg/virt-api/webhooks/mutating-webhook"
	validating_webhook "kubevirt.io/kubevirt/pkg/virt-api/webhooks/validating-webhook"
	virtconfig "kubevirt.io/kubevirt/pkg/virt-config"
)

const serveUsage = `usage: kubevirt-oracle serve [--listen ADDR:PORT] [--tls-cert FILE --tls-key FILE]
                             [--objects FILE|DIR]...
  --listen defaults to 127.0.0.1:$PORT (8443 without PORT), --tls-cert to $TLS_CERT,
  --tls-key to $TLS_KEY; port 0 picks a free port (the log line names it)`

// The paths are KubeVirt's (pkg/virt-operator/resource/generate/components/webhooks.go:
// VMMutatePath, VMValidatePath, VMIMutatePath, VMICreateValidatePath, VMIUpdateValidatePath)
// plus vmgate's VMI validating path.
const (
	vmMutatePath          = "/virtualmachines-mutate"
	vmValidatePath        = "/virtualmachines-validate"
	vmiMutatePath         = "/virtualmachineinstances-mutate"
	vmiCreateValidatePath = "/virtualmachineinstances-validate-create"
	vmiUpdateValidatePath = "/virtualmachineinstances-validate-update"
	vmiValidatePath       = "/virtualmachineinstances-validate"

	maxBodyBytes = 8 << 20
)

var errHelp = errors.New("help")

type serveOptions struct {
	listen, cert, key string
	objects           []string
}

func parseServeOptions(args []string) (*serveOptions, error) {
	o := &serveOptions{listen: "127.0.0.1:8443", cert: os.Getenv("TLS_CERT"), key: os.Getenv("TLS_KEY")}
	if port := os.Getenv("PORT"); port != "" {
		o.listen = net.JoinHostPort("127.0.0.1", port)
	}
	for i := 0; i < len(args); i++ {
		if args[i] == "--help" || args[i] == "-h" {
			return nil, errHelp
		}
		name, value, inline := strings.Cut(args[i], "=")
		if !strings.HasPrefix(name, "--") {
			return nil, fmt.Errorf("unexpected argument %q", args[i])
		}
		if !inline {
			if i+1 >= len(args) {
				return nil, fmt.Errorf("%s needs a value", name)
			}
			i++
			value = args[i]
		}
		switch name {
		case "--listen":
			o.listen = value
		case "--tls-cert":
			o.cert = value
		case "--tls-key":
			o.key = value
		case "--objects":
			o.objects = append(o.objects, value)
		default:
			return nil, fmt.Errorf("unknown option %s", name)
		}
	}
	if o.cert == "" || o.key == "" {
		return nil, fmt.Errorf("a certificate and key are needed: --tls-cert/--tls-key or TLS_CERT/TLS_KEY")
	}
	if _, _, err := net.SplitHostPort(o.listen); err != nil {
		return nil, fmt.Errorf("--listen %q: %v", o.listen, err)
	}
	return o, nil
}

// serve runs until SIGTERM or SIGINT (exit 0 once open requests are answered) or a failure to
// start (exit 2).
func serve(args []string, stderr io.Writer) int {
	opts, err := parseServeOptions(args)
	if err == errHelp {
		fmt.Fprintln(stderr, serveUsage)
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "kubevirt-oracle serve: %v\n%s\n", err, serveUsage)
		return 2
	}
	var objects []manifest
	for _, path := range opts.objects {
		m, err := readManifests(path)
		if err != nil {
			fmt.Fprintf(stderr, "kubevirt-oracle serve: --objects %s: %v\n", path, err)
			return 2
		}
		objects = append(objects, m...)
	}
	// Objects without a namespace go to "default", as `vmgate serve` places them.
	c, notes, err := newCluster(objects, "default")
	for _, note := range notes {
		fmt.Fprintf(stderr, "kubevirt-oracle serve: %s\n", note)
	}
	if err != nil {
		fmt.Fprintf(stderr, "kubevirt-oracle serve: %v\n", err)
		return 2
	}
	cert, err := tls.LoadX509KeyPair(opts.cert, opts.key)
	if err != nil {
		fmt.Fprintf(stderr, "kubevirt-oracle serve: %v\n", err)
		return 2
	}
	listener, err := net.Listen("tcp", opts.listen)
	if err != nil {
		fmt.Fprintf(stderr, "kubevirt-oracle serve: %v\n", err)
		return 2
	}

	server := &http.Server{
		Handler: c.webhookMux(stderr),
		// As virt-api: TLS 1.2 at least (KubeVirt's default TLSConfiguration) and HTTP/2
		// disabled (CVE-2023-44487), no timeouts.
		TLSConfig:    &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}},
		TLSNextProto: map[string]func(*http.Server, *tls.Conn, http.Handler){},
		ErrorLog:     stdlog.New(stderr, "kubevirt-oracle serve: ", 0),
	}
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- server.ServeTLS(listener, "", "") }()
	fmt.Fprintf(stderr, "kubevirt-oracle serve: listening on https://%s (%d cluster objects, GOMAXPROCS=%d)\n",
		listener.Addr(), len(objects), runtime.GOMAXPROCS(0))

	select {
	case err := <-done:
		fmt.Fprintf(stderr, "kubevirt-oracle serve: %v\n", err)
		return 2
	case s := <-signals:
		fmt.Fprintf(stderr, "kubevirt-oracle serve: %v: shutting down\n", s)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := server.Shutdown(ctx); err != nil {
		fmt.Fprintf(stderr, "kubevirt-oracle serve: shutdown: %v\n", err)
		return 2
	}
	return 0
}

// webhookMux registers KubeVirt's handlers as pkg/virt-api/api.go does
// (registerMutatingWebhooks, registerValidatingWebhooks), each behind guard.
func (c *cluster) webhookMux(stderr io.Writer) *http.ServeMux {
	vmiCreate := func(w http.ResponseWriter, r *http.Request) {
		validating_webhook.ServeVMICreate(w, r, c.clusterConfig, c.serviceAccounts,
			func(field *k8sfield.Path, vmiSpec *v1.VirtualMachineInstanceSpec, clusterCfg *virtconfig.ClusterConfig) []metav1.StatusCause {
				return netadmitter.Validate(field, vmiSpec, clusterCfg)
			},
		)
	}
	vmiUpdate := func(w http.ResponseWriter, r *http.Request) {
		validating_webhook.ServeVMIUpdate(w, r, c.clusterConfig, c.serviceAccounts)
	}
	mux := http.NewServeMux()
	handle := func(path, webhook string, h http.HandlerFunc) {
		mux.Handle(path, guard(webhook, stderr, h))
	}
	handle(vmMutatePath, "virtualmachines-mutator.kubevirt.io", func(w http.ResponseWriter, r *http.Request) {
		mutating_webhook.ServeVMs(w, r, c.clusterConfig, c.virtClient)
	})
	handle(vmiMutatePath, "virtualmachineinstances-mutator.kubevirt.io", func(w http.ResponseWriter, r *http.Request) {
		mutating_webhook.ServeVMIs(w, r, c.clusterConfig, c.informers, c.serviceAccounts)
	})
	handle(vmValidatePath, "virtualmachine-validator.kubevirt.io", func(w http.ResponseWriter, r *http.Request) {
		validating_webhook.ServeVMs(w, r, c.clusterConfig, c.virtClient, c.informers, c.serviceAccounts)
	})
	handle(vmiCreateValidatePath, "virtualmachineinstances-create-validator.kubevirt.io", vmiCreate)
	handle(vmiUpdateValidatePath, "virtualmachineinstances-update-validator.kubevirt.io", vmiUpdate)
	handle(vmiValidatePath, "virtualmachineinstances-validator (vmgate's path)", func(w http.ResponseWriter, r *http.Request) {
		switch operationOf(r) {
		case admissionv1.Create:
			vmiCreate(w, r)
		case admissionv1.Update:
			vmiUpdate(w, r)
		default:
			validating_webhooks.Serve(w, r, allowAll{})
		}
	})
	return mux
}

type allowAll struct{}

func (allowAll) Admit(context.Context, *admissionv1.AdmissionReview) *admissionv1.AdmissionResponse {
	return validating_webhooks.NewPassingAdmissionResponse()
}

// operationOf peeks at request.operation; guard has made the body re-readable.
func operationOf(r *http.Request) admissionv1.Operation {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	var peek struct {
		Request *struct {
			Operation admissionv1.Operation `json:"operation"`
		} `json:"request"`
	}
	if json.Unmarshal(body, &peek) != nil || peek.Request == nil {
		return admissionv1.Create // KubeVirt's handler refuses the body itself
	}
	return peek.Request.Operation
}

// guard runs one of KubeVirt's handlers on a body read in full (at most 8 MiB), explains the 400
// KubeVirt answers without a body, and turns a panic into a 500: one request never ends the
// process.
func guard(webhook string, stderr io.Writer, h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
		if err != nil {
			var tooLarge *http.MaxBytesError
			if errors.As(err, &tooLarge) {
				writeStatus(w, http.StatusRequestEntityTooLarge, metav1.StatusReasonRequestEntityTooLarge,
					fmt.Sprintf("the body is larger than %d bytes", maxBodyBytes))
				return
			}
			writeStatus(w, http.StatusBadRequest, metav1.StatusReasonBadRequest, fmt.Sprintf("reading the body: %v", err))
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		rec := &deferredStatus{ResponseWriter: w}
		defer func() {
			p := recover()
			if p == nil {
				return
			}
			if p == http.ErrAbortHandler || rec.forwarded {
				panic(p) // net/http drops the connection, as for virt-api
			}
			if reason := unusable(r, body); reason != "" {
				writeStatus(w, http.StatusBadRequest, metav1.StatusReasonBadRequest, reason)
				return
			}
			fmt.Fprintf(stderr, "kubevirt-oracle serve: KubeVirt's webhook %s panicked on %s: %v\n%s", webhook, r.URL.Path, p, debug.Stack())
			writeStatus(w, http.StatusInternalServerError, metav1.StatusReasonInternalError,
				fmt.Sprintf("KubeVirt's webhook %s panicked: %v", webhook, p))
		}()
		h(rec, r)
		switch {
		case rec.forwarded:
		case rec.status == http.StatusBadRequest:
			reason := unusable(r, body)
			if reason == "" {
				reason = "KubeVirt's webhook could not encode or write its answer"
			}
			writeStatus(w, http.StatusBadRequest, metav1.StatusReasonBadRequest, reason)
		case rec.status != 0:
			w.WriteHeader(rec.status)
		}
	})
}

// unusable says why KubeVirt cannot use the body (webhookutils.GetAdmissionReview's checks, and
// a review without request), or "" when it can.
func unusable(r *http.Request, body []byte) string {
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		return fmt.Sprintf("Content-Type is %q: KubeVirt's webhooks read application/json only", ct)
	}
	if _, err := webhookutils.GetAdmissionReview(&http.Request{Header: r.Header, Body: io.NopCloser(bytes.NewReader(body))}); err != nil {
		return fmt.Sprintf("the body is not an AdmissionReview: %v", err)
	}
	var review admissionv1.AdmissionReview
	if err := json.Unmarshal(body, &review); err == nil && review.Request == nil {
		return "the AdmissionReview has no request"
	}
	return ""
}

func writeStatus(w http.ResponseWriter, code int, reason metav1.StatusReason, message string) {
	out, _ := json.Marshal(&metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure,
		Message:  message,
		Reason:   reason,
		Code:     int32(code),
	})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(append(out, '\n'))
}

// deferredStatus holds back a status KubeVirt's handler sets until it writes a body, so that a
// bare 400 can still get a body saying why.
type deferredStatus struct {
	http.ResponseWriter
	status    int
	forwarded bool
}

func (d *deferredStatus) WriteHeader(code int) {
	if !d.forwarded && d.status == 0 {
		d.status = code
	}
}

func (d *deferredStatus) Write(b []byte) (int, error) {
	if !d.forwarded {
		d.forwarded = true
		if d.status != 0 {
			d.ResponseWriter.WriteHeader(d.status)
		}
	}
	return d.ResponseWriter.Write(b)
}
