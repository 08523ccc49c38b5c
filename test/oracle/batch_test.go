package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const testVM = `{"apiVersion":"kubevirt.io/v1","kind":"VirtualMachine","metadata":{"name":"vm1"},
 "spec":{"runStrategy":"Always","instancetype":{"name":"small"},
  "template":{"spec":{"domain":{"devices":{}}}}}}`

const testInstancetype = `{"apiVersion":"instancetype.kubevirt.io/v1beta1","kind":"VirtualMachineClusterInstancetype",
 "metadata":{"name":"small"},"spec":{"cpu":{"guest":1},"memory":{"guest":"1Gi"}}}`

func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func line(t *testing.T, args ...string) string {
	t.Helper()
	encoded, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	return string(encoded) + "\n"
}

func answers(t *testing.T, out string) []batchAnswer {
	t.Helper()
	var got []batchAnswer
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		var a batchAnswer
		if err := json.Unmarshal([]byte(l), &a); err != nil {
			t.Fatalf("answer line %q: %v", l, err)
		}
		got = append(got, a)
	}
	return got
}

// Real check runs through batch: the same answer as a run of its own, a bad line or a stdin
// read answered 2 without ending the batch, and no state carried from one run to the next.
func TestBatchRuns(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "1767225600")
	dir := t.TempDir()
	vm := writeFile(t, dir, "vm.json", testVM)
	with := writeFile(t, dir, "with.json", testInstancetype)
	without := writeFile(t, dir, "without.json", `{"apiVersion":"v1","kind":"List","items":[]}`)

	input := line(t, "check", "-f", vm, "--objects", with, "-o", "json") +
		"this is not JSON\n" +
		line(t, "check", "-f", vm, "--objects", without, "-o", "json") +
		line(t, "check", "-f", "-") +
		line(t, "check", "--objects="+with, "-f", vm) +
		line(t, "frobnicate")
	var out bytes.Buffer
	if err := batch(strings.NewReader(input), &out, run); err != nil {
		t.Fatal(err)
	}
	got := answers(t, out.String())
	if len(got) != 6 {
		t.Fatalf("%d answers for 6 lines:\n%s", len(got), out.String())
	}

	var alone, aloneErr bytes.Buffer
	status := run([]string{"check", "-f", vm, "--objects", with, "-o", "json"}, &alone, &aloneErr)
	if got[0].Status != status || got[0].Stdout != alone.String() {
		t.Errorf("batch answer differs from a run of its own: status %d vs %d\n%s\nvs\n%s",
			got[0].Status, status, got[0].Stdout, alone.String())
	}
	if got[0].Status != 0 || !strings.Contains(got[0].Stdout, `"kubevirt.io/cluster-instancetype-name": "small"`) {
		t.Errorf("line 1: want admitted and expanded with the instancetype, got %d\n%s%s", got[0].Status, got[0].Stdout, got[0].Stderr)
	}
	if got[1].Status != 2 || !strings.Contains(got[1].Stderr, "JSON array of strings") {
		t.Errorf("line 2 (not JSON): %+v", got[1])
	}
	// Without the instancetype the VM controller creates no VMI: nothing of line 1's cluster
	// may remain.
	if got[2].Status != 0 || strings.Contains(got[2].Stdout, "cluster-instancetype-name") ||
		!strings.Contains(got[2].Stdout, `"expanded": null`) {
		t.Errorf("line 3 saw the instancetype of line 1 or failed: %d\n%s%s", got[2].Status, got[2].Stdout, got[2].Stderr)
	}
	if got[3].Status != 2 || !strings.Contains(got[3].Stderr, "batch stream") {
		t.Errorf("line 4 (stdin): %+v", got[3])
	}
	if got[4].Status != 0 || got[4].Stdout != got[0].Stdout {
		t.Errorf("line 5 (line 1 again, --objects=FILE) differs from line 1: %d\n%s", got[4].Status, got[4].Stdout)
	}
	if got[5].Status != 2 || !strings.Contains(got[5].Stderr, "usage") {
		t.Errorf("line 6 (unknown command): %+v", got[5])
	}
}

// A panic that escapes a run answers 2 for its line; the batch goes on.
func TestBatchRecoversPanics(t *testing.T) {
	panicky := func(args []string, stdout, stderr io.Writer) int {
		if args[0] == "boom" {
			io.WriteString(stdout, "partial")
			panic("kaboom")
		}
		io.WriteString(stdout, strings.Join(args, " "))
		return 1
	}
	var out bytes.Buffer
	if err := batch(strings.NewReader(line(t, "boom")+line(t, "after", "it")), &out, panicky); err != nil {
		t.Fatal(err)
	}
	got := answers(t, out.String())
	want := []batchAnswer{
		{Status: 2, Stdout: "partial", Stderr: "kubevirt-oracle: panic: kaboom\n"},
		{Status: 1, Stdout: "after it"},
	}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("got %+v, want %+v", got, want)
	}
}

// Each answer is written before the next line is read: a caller can go line by line.
func TestBatchAnswersEachLineAtOnce(t *testing.T) {
	inReader, inWriter := io.Pipe()
	outReader, outWriter := io.Pipe()
	echo := func(args []string, stdout, stderr io.Writer) int {
		io.WriteString(stdout, args[0])
		return 0
	}
	done := make(chan error, 1)
	go func() { done <- batch(inReader, outWriter, echo); outWriter.Close() }()
	answersIn := bufio.NewReader(outReader)
	for _, word := range []string{"one", "two"} {
		if _, err := io.WriteString(inWriter, line(t, word)); err != nil {
			t.Fatal(err)
		}
		got, err := answersIn.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if want := `{"status":0,"stdout":"` + word + `","stderr":""}` + "\n"; got != want {
			t.Fatalf("got %q, want %q", got, want)
		}
	}
	inWriter.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
