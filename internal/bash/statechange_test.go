package bash

import "testing"

func TestMayChangeState(t *testing.T) {
	for cmd, want := range map[string]bool{
		"ls -la":                              false,
		"go test ./... | tail -5":             false,
		"echo $((1+2)); seq 1 $((10*2))":      false,
		"grep -rn foo . && echo found":        false,
		"/usr/bin/env FOO=1 printenv FOO":     false,
		"FOO=1 ls":                            false,
		"printf '%s' x":                       false,
		"true; false; :":                      false,
		"cd /tmp":                             true,
		"cd /tmp && ls":                       true,
		"export X=1":                          true,
		"X=1":                                 true,
		"x=$((x+1))":                          true,
		"((x++))":                             true,
		"echo $((y=2))":                       true,
		"echo $((y+=2))":                      true,
		"echo ${z:=3}":                        true,
		"f() { :; }":                          true,
		"source .venv/bin/activate":           true,
		". ~/.profile":                        true,
		"alias ll='ls -l'":                    true,
		"set -o vi":                           true,
		"shopt -s extglob":                    true,
		"read x < f":                          true,
		"printf -v x %s 1":                    true,
		"declare -x A=1":                      true,
		"local a":                             true,
		"let a=1":                             true,
		"eval \"$cmd\"":                       true,
		"$CMD arg":                            true,
		"if true; then cd /; fi":              true,
		"for i in 1 2; do export A$i=1; done": true,
		"ll":                                  true, // not on PATH: an alias or function
		"myfunc arg":                          true,
		"echo 'unterminated":                  true,
	} {
		if got := MayChangeState(cmd, []string{"myfunc"}); got != want {
			t.Errorf("MayChangeState(%q) = %v, want %v", cmd, got, want)
		}
	}
}
