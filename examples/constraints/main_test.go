package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	for _, tc := range []struct {
		args       []string
		wantOut    string
		wantErr    string
		wantStatus int
	}{
		{
			args:    []string{"~> 2.3", "2.2.0", "2.3.0", "2.9.1", "3.0.0"},
			wantOut: "~> 2.3\n2.2.0 false\n2.3.0 true\n2.9.1 true\n3.0.0 false\nnewest: 2.9.1\n",
		},
		{
			args:    []string{">= 2, >= 1.2, < 1.3", "1.2.5"},
			wantOut: ">= 1.2.0, < 1.3.0, >= 2.0.0\n1.2.5 false\nnewest: none\n",
		},
		{
			args:    []string{"-module", "~> 1", "v1.0.0", "2.5"},
			wantOut: "~> 1\nv1.0.0 true\n2.5 true\nnewest: 2.5.0\n",
		},
		{
			args:    []string{"1.0.0"},
			wantOut: "1.0.0\nnewest: none\n",
		},
		{
			args:       []string{"=> 1.0"},
			wantErr:    "invalid specification \"=> 1.0\": invalid constraint operator \"=>\"; did you mean \">=\"?\n",
			wantStatus: 1,
		},
		{
			args:       []string{">= 1.0", "v1.2.0"},
			wantErr:    "invalid version \"v1.2.0\": a \"v\" prefix should not be used\n",
			wantStatus: 1,
		},
		{
			args:       []string{"-module", "1.0 || 2.0"},
			wantErr:    "malformed constraint: 1.0 || 2.0\n",
			wantStatus: 1,
		},
	} {
		var out, errOut bytes.Buffer
		status := run(tc.args, &out, &errOut)
		if status != tc.wantStatus || out.String() != tc.wantOut || errOut.String() != tc.wantErr {
			t.Errorf("run(%q) = %d\nstdout:\n%s\nstderr:\n%s\nwant %d\nstdout:\n%s\nstderr:\n%s",
				tc.args, status, out.String(), errOut.String(), tc.wantStatus, tc.wantOut, tc.wantErr)
		}
	}
}

func TestRunUsage(t *testing.T) {
	var out, errOut bytes.Buffer
	if status := run(nil, &out, &errOut); status != 2 || !strings.Contains(errOut.String(), "usage:") {
		t.Errorf("run() = %d, stderr %q", status, errOut.String())
	}
}
