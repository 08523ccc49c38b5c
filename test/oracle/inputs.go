package main

// Reading `-f` and `--objects` inputs as `vmgate check` does (docs/webhook.md): YAML or JSON,
// multi-document YAML, JSON arrays and `kind: List`; a directory means every *.yaml, *.yml and
// *.json file under it, recursively, in path order. Each object is named "PATH#N", N counting
// the objects of its file from 0.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	k8syaml "k8s.io/apimachinery/pkg/util/yaml"
)

type manifest struct {
	source string
	raw    []byte
	kind   string
}

type typeMeta struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Items      []json.RawMessage `json:"items"`
}

// expandPath lists the files a -f/--objects argument names.
func expandPath(path string) ([]string, error) {
	if path == "-" {
		return []string{"-"}, nil
	}
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return []string{path}, nil
	}
	var files []string
	err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		switch strings.ToLower(filepath.Ext(p)) {
		case ".yaml", ".yml", ".json":
			files = append(files, p)
		}
		return nil
	})
	sort.Strings(files)
	return files, err
}

func readManifests(path string) ([]manifest, error) {
	files, err := expandPath(path)
	if err != nil {
		return nil, err
	}
	var out []manifest
	for _, file := range files {
		var data []byte
		if file == "-" {
			data, err = io.ReadAll(os.Stdin)
		} else {
			data, err = os.ReadFile(file)
		}
		if err != nil {
			return nil, err
		}
		objects, err := splitDocuments(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", file, err)
		}
		for i, raw := range objects {
			var tm typeMeta
			_ = json.Unmarshal(raw, &tm)
			out = append(out, manifest{source: fmt.Sprintf("%s#%d", file, i), raw: raw, kind: tm.Kind})
		}
	}
	return out, nil
}

// splitDocuments turns one file's bytes into its objects.
func splitDocuments(data []byte) ([]json.RawMessage, error) {
	decoder := k8syaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []json.RawMessage
	for {
		var doc json.RawMessage
		if err := decoder.Decode(&doc); err != nil {
			if err == io.EOF {
				break
			}
			return nil, err
		}
		items, err := flatten(doc)
		if err != nil {
			return nil, err
		}
		out = append(out, items...)
	}
	return out, nil
}

func flatten(doc json.RawMessage) ([]json.RawMessage, error) {
	trimmed := bytes.TrimSpace(doc)
	if len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
		return nil, nil
	}
	if trimmed[0] == '[' {
		var items []json.RawMessage
		if err := json.Unmarshal(trimmed, &items); err != nil {
			return nil, err
		}
		var out []json.RawMessage
		for _, item := range items {
			sub, err := flatten(item)
			if err != nil {
				return nil, err
			}
			out = append(out, sub...)
		}
		return out, nil
	}
	if trimmed[0] != '{' {
		return nil, fmt.Errorf("a document is not an object")
	}
	var tm typeMeta
	if err := json.Unmarshal(trimmed, &tm); err != nil {
		return nil, err
	}
	if tm.Kind == "List" || (strings.HasSuffix(tm.Kind, "List") && tm.Items != nil) {
		var out []json.RawMessage
		for _, item := range tm.Items {
			sub, err := flatten(item)
			if err != nil {
				return nil, err
			}
			out = append(out, sub...)
		}
		return out, nil
	}
	return []json.RawMessage{trimmed}, nil
}
