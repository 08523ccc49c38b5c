// kubevirt-oracle: KubeVirt's own admission code (kubevirt.io/kubevirt, the version pinned in
// go.mod) behind `vmgate check`'s command line and JSON output (docs/webhook.md, "vmgate check output"), so vmgate's
// answers can be compared with KubeVirt's.
//
//	kubevirt-oracle check [-f FILE|DIR|-]... [--objects FILE|DIR]... [--old FILE]
//	                      [--operation CREATE|UPDATE] [--namespace NS] [-o json]
//	kubevirt-oracle batch   (one check run per stdin line: batch.go)
//
// Exit status: 0 all admitted, 1 at least one denied, 2 unusable input or an oracle failure.
// KubeVirt's log goes to stderr only when KUBEVIRT_ORACLE_LOG is set.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"kubevirt.io/client-go/log"
)

type options struct {
	files     []string
	objects   []string
	old       string
	operation string
	namespace string
	output    string
}

const usage = `usage: kubevirt-oracle check [-f FILE|DIR|-]... [--objects FILE|DIR]... [--old FILE]
                             [--operation CREATE|UPDATE] [--namespace NS] [-o json]`

func parseOptions(args []string) (*options, error) {
	o := &options{operation: "CREATE", namespace: "default", output: "json"}
	for i := 0; i < len(args); i++ {
		arg := args[i]
		name, value, inline := strings.Cut(arg, "=")
		if !strings.HasPrefix(arg, "-") || arg == "-" {
			return nil, fmt.Errorf("unexpected argument %q", arg)
		}
		if !inline {
			name = arg
		}
		next := func() (string, error) {
			if inline {
				return value, nil
			}
			if i+1 >= len(args) {
				return "", fmt.Errorf("%s needs a value", name)
			}
			i++
			return args[i], nil
		}
		v, err := next()
		if err != nil {
			return nil, err
		}
		switch name {
		case "-f", "--filename":
			o.files = append(o.files, v)
		case "--objects":
			o.objects = append(o.objects, v)
		case "--old":
			o.old = v
		case "--operation":
			v = strings.ToUpper(v)
			if v != "CREATE" && v != "UPDATE" {
				return nil, fmt.Errorf("--operation must be CREATE or UPDATE, not %q", v)
			}
			o.operation = v
		case "--namespace", "-n":
			o.namespace = v
		case "-o", "--output":
			if v != "json" {
				return nil, fmt.Errorf("-o: only json is supported by the oracle, not %q", v)
			}
			o.output = v
		default:
			return nil, fmt.Errorf("unknown option %s", name)
		}
	}
	if len(o.files) == 0 {
		return nil, fmt.Errorf("no input: give -f FILE|DIR|-")
	}
	if o.operation == "UPDATE" && o.old == "" {
		return nil, fmt.Errorf("--operation UPDATE needs --old FILE")
	}
	return o, nil
}

func main() {
	if len(os.Args) == 2 && os.Args[1] == "batch" { // batch.go
		if err := batch(os.Stdin, os.Stdout, run); err != nil {
			fmt.Fprintf(os.Stderr, "kubevirt-oracle batch: %v\n", err)
			os.Exit(2)
		}
		return
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) (status int) {
	if os.Getenv("KUBEVIRT_ORACLE_LOG") == "" {
		log.Log.SetIOWriter(io.Discard)
	}
	if len(args) > 0 && args[0] == "serve" {
		return serve(args[1:], stderr)
	}
	if len(args) == 0 || args[0] != "check" {
		fmt.Fprintln(stderr, usage)
		return 2
	}
	opts, err := parseOptions(args[1:])
	if err != nil {
		fmt.Fprintf(stderr, "kubevirt-oracle: %v\n%s\n", err, usage)
		return 2
	}
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(stderr, "kubevirt-oracle: %v\n", r)
			status = 2
		}
	}()
	results, notes, err := check(opts)
	for _, note := range notes {
		fmt.Fprintf(stderr, "kubevirt-oracle: %s\n", note)
	}
	if err != nil {
		fmt.Fprintf(stderr, "kubevirt-oracle: %v\n", err)
		return 2
	}
	out, err := json.MarshalIndent(map[string]any{"results": results}, "", "  ")
	if err != nil {
		fmt.Fprintf(stderr, "kubevirt-oracle: %v\n", err)
		return 2
	}
	fmt.Fprintln(stdout, string(out))
	for _, r := range results {
		if !r.Allowed {
			return 1
		}
	}
	return 0
}
