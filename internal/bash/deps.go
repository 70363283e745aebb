package bash

import (
	_ "github.com/charmbracelet/x/ansi"
	_ "mvdan.cc/sh/v3/syntax"
)
