// Command crdgen prints CustomResourceDefinitions exactly as their projects generate them,
// never hand-written:
//
//	crdgen kubevirt            KubeVirt's CRDs from virt-operator's own constructors
//	                           (pkg/virt-operator/resource/generate/components): the objects
//	                           virt-operator creates, less the install-time labels and
//	                           annotations it injects (injectOperatorMetadata), as YAML.
//	crdgen cdi FILE NAME...    the named entries of CDI's published CRD map (CDICRDs in
//	                           pkg/operator/resources/crds_generated.go of the
//	                           kubevirt.io/containerized-data-importer module), read with go/parser
//	                           so that CDI's own dependency graph is not built.
//
// Each document is preceded by "---".
package main

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strconv"
	"strings"

	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"kubevirt.io/kubevirt/pkg/virt-operator/resource/generate/components"
)

func main() {
	if len(os.Args) < 2 {
		fail("usage: crdgen kubevirt | crdgen cdi FILE NAME...")
	}
	switch os.Args[1] {
	case "kubevirt":
		kubevirt()
	case "cdi":
		if len(os.Args) < 4 {
			fail("usage: crdgen cdi FILE NAME...")
		}
		cdi(os.Args[2], os.Args[3:])
	default:
		fail("unknown source " + os.Args[1])
	}
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "crdgen:", msg)
	os.Exit(1)
}

// kubevirt prints kubevirt.io/v1 VirtualMachine, VirtualMachineInstance and KubeVirt, and
// instancetype.kubevirt.io's four kinds.
func kubevirt() {
	constructors := []func() (*extv1.CustomResourceDefinition, error){
		components.NewVirtualMachineCrd,
		components.NewVirtualMachineInstanceCrd,
		components.NewKubeVirtCrd,
		components.NewVirtualMachineInstancetypeCrd,
		components.NewVirtualMachineClusterInstancetypeCrd,
		components.NewVirtualMachinePreferenceCrd,
		components.NewVirtualMachineClusterPreferenceCrd,
	}
	for _, newCRD := range constructors {
		crd, err := newCRD()
		if err != nil {
			fail(err.Error())
		}
		out, err := marshal(crd)
		if err != nil {
			fail(err.Error())
		}
		fmt.Print("---\n", string(out))
	}
}

// marshal renders crd as YAML without its empty status and null creationTimestamp, which
// the API server sets itself. (KubeVirt's tools/util.MarshallObject, made for its manifests,
// rewrites quotes in the text and corrupts descriptions that end in a quote.)
func marshal(crd *extv1.CustomResourceDefinition) ([]byte, error) {
	raw, err := json.Marshal(crd)
	if err != nil {
		return nil, err
	}
	var obj unstructured.Unstructured
	if err := json.Unmarshal(raw, &obj.Object); err != nil {
		return nil, err
	}
	unstructured.RemoveNestedField(obj.Object, "metadata", "creationTimestamp")
	unstructured.RemoveNestedField(obj.Object, "status")
	raw, err = json.Marshal(obj.Object)
	if err != nil {
		return nil, err
	}
	return yaml.JSONToYAML(raw)
}

// cdi finds `var CDICRDs map[string]string = map[string]string{"name": `yaml`, ...}` in
// file and prints the entries named, in the order given.
func cdi(file string, names []string) {
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
	if err != nil {
		fail(err.Error())
	}
	crds := map[string]string{}
	ast.Inspect(f, func(n ast.Node) bool {
		spec, ok := n.(*ast.ValueSpec)
		if !ok || len(spec.Names) != 1 || spec.Names[0].Name != "CDICRDs" || len(spec.Values) != 1 {
			return true
		}
		lit, ok := spec.Values[0].(*ast.CompositeLit)
		if !ok {
			fail("CDICRDs is not a map literal")
		}
		for _, elt := range lit.Elts {
			kv := elt.(*ast.KeyValueExpr)
			key, err := stringValue(kv.Key)
			if err != nil {
				fail(err.Error())
			}
			value, err := stringValue(kv.Value)
			if err != nil {
				fail(err.Error())
			}
			crds[key] = value
		}
		return false
	})
	if len(crds) == 0 {
		fail("no CDICRDs map in " + file)
	}
	for _, name := range names {
		doc, ok := crds[name]
		if !ok {
			fail("CDICRDs has no " + name)
		}
		fmt.Print("---\n", strings.TrimSuffix(doc, "\n"), "\n")
	}
}

// stringValue evaluates a string literal or a concatenation of them (the generator writes a
// backquote inside a raw string as ` + "`" + `).
func stringValue(e ast.Expr) (string, error) {
	switch v := e.(type) {
	case *ast.BasicLit:
		if v.Kind != token.STRING {
			return "", fmt.Errorf("not a string literal at %d", v.Pos())
		}
		return strconv.Unquote(v.Value)
	case *ast.BinaryExpr:
		if v.Op != token.ADD {
			return "", fmt.Errorf("unexpected operator %s", v.Op)
		}
		l, err := stringValue(v.X)
		if err != nil {
			return "", err
		}
		r, err := stringValue(v.Y)
		if err != nil {
			return "", err
		}
		return l + r, nil
	}
	return "", fmt.Errorf("unexpected expression %T", e)
}
