package main

// kubevirt-oracle batch: many `check` runs in one process, so that KubeVirt's package
// initialisation (~3 s, pkg/virt-api/definitions) is paid once. Each stdin line is a JSON array
// of strings, the arguments of one run after the program name (["check", "-f", "vm.json", ...]);
// each gets one stdout line {"status": N, "stdout": "...", "stderr": "..."}, flushed at once, so
// that a caller can send the next line after reading the answer.
//
// Runs share nothing: run() reads its files and builds its cluster (fake clientsets, stores,
// ClusterConfig) afresh. A line that is not a JSON array of strings, a run that reads stdin
// (stdin is the batch stream) and a panic that escapes the run all answer status 2 for that
// line only; the next line is served.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

type batchAnswer struct {
	Status int    `json:"status"`
	Stdout string `json:"stdout"`
	Stderr string `json:"stderr"`
}

type runner func(args []string, stdout, stderr io.Writer) int

// batch serves lines from in until EOF; it returns an error only when in or out fails.
func batch(in io.Reader, out io.Writer, run runner) error {
	reader := bufio.NewReaderSize(in, 1<<20)
	writer := bufio.NewWriter(out)
	for {
		line, err := reader.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			answer := batchOne(line, run)
			encoded, merr := json.Marshal(answer)
			if merr != nil { // strings and ints only: cannot happen
				return merr
			}
			if _, werr := writer.Write(append(encoded, '\n')); werr != nil {
				return werr
			}
			if werr := writer.Flush(); werr != nil {
				return werr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func batchOne(line []byte, run runner) (answer batchAnswer) {
	var stdout, stderr bytes.Buffer
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(&stderr, "kubevirt-oracle: panic: %v\n", r)
			answer = batchAnswer{Status: 2, Stdout: stdout.String(), Stderr: stderr.String()}
		}
	}()
	var args []string
	if err := json.Unmarshal(line, &args); err != nil {
		return batchAnswer{Status: 2, Stderr: fmt.Sprintf("kubevirt-oracle batch: a line must be a JSON array of strings: %v\n", err)}
	}
	if readsStdin(args) {
		return batchAnswer{Status: 2, Stderr: "kubevirt-oracle batch: '-' (stdin) is the batch stream; name files instead\n"}
	}
	status := run(args, &stdout, &stderr)
	return batchAnswer{Status: status, Stdout: stdout.String(), Stderr: stderr.String()}
}

// readsStdin tells whether a check run would read "-" from stdin.
func readsStdin(args []string) bool {
	for i, arg := range args {
		name, value, inline := strings.Cut(arg, "=")
		switch name {
		case "-f", "--filename", "--objects", "--old":
			if inline && value == "-" {
				return true
			}
			if !inline && i+1 < len(args) && args[i+1] == "-" {
				return true
			}
		}
	}
	return false
}
