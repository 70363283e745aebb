package rpc

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"agentsh/internal/agent"
	"agentsh/internal/bash"
	"agentsh/internal/llm"
)

// wireCases are input lines with the exact line each is answered with, as
// the server answered them when every command was decoded into one shared
// struct: a wrongly typed field of any command fails the whole line, the
// error names the field as a field of "command", and fields nobody knows
// are ignored. Each is answered at once (no model, no jobs, no models,
// no session switching), so the answers come in the order of the lines.
var wireCases = []struct{ in, out string }{
	{`{not json`,
		`{"type":"response","command":"parse","success":false,"error":"Failed to parse command: invalid character 'n' looking for beginning of object key string"}`},
	{`[]`,
		`{"type":"response","command":"parse","success":false,"error":"Failed to parse command: json: cannot unmarshal array into Go value of type rpc.command"}`},
	{`"x"`,
		`{"type":"response","command":"parse","success":false,"error":"Failed to parse command: json: cannot unmarshal string into Go value of type rpc.command"}`},
	{`5`,
		`{"type":"response","command":"parse","success":false,"error":"Failed to parse command: json: cannot unmarshal number into Go value of type rpc.command"}`},
	{`true`,
		`{"type":"response","command":"parse","success":false,"error":"Failed to parse command: json: cannot unmarshal bool into Go value of type rpc.command"}`},
	{`null`,
		`{"type":"response","command":"parse","success":false,"error":"Failed to parse command: missing \"type\""}`},
	{`{}`,
		`{"type":"response","command":"parse","success":false,"error":"Failed to parse command: missing \"type\""}`},
	{`{"id":"a"}`,
		`{"type":"response","command":"parse","success":false,"error":"Failed to parse command: missing \"type\""}`},
	{`{"type":5}`,
		`{"type":"response","command":"parse","success":false,"error":"Failed to parse command: json: cannot unmarshal number into Go struct field command.type of type string"}`},
	{`{"type":null,"id":"a2"}`,
		`{"type":"response","command":"parse","success":false,"error":"Failed to parse command: missing \"type\""}`},
	{`{"message":5,"limit":"x"}`,
		`{"type":"response","command":"parse","success":false,"error":"Failed to parse command: json: cannot unmarshal number into Go struct field command.message of type string"}`},
	{`{"id":"b","type":"get_state","message":5}`,
		`{"type":"response","command":"parse","success":false,"error":"Failed to parse command: json: cannot unmarshal number into Go struct field command.message of type string"}`},
	{`{"id":"c","type":"prompt","message":5}`,
		`{"type":"response","command":"parse","success":false,"error":"Failed to parse command: json: cannot unmarshal number into Go struct field command.message of type string"}`},
	{`{"id":"d","type":"bash","background":"yes"}`,
		`{"type":"response","command":"parse","success":false,"error":"Failed to parse command: json: cannot unmarshal string into Go struct field command.background of type bool"}`},
	{`{"id":"d2","type":"abort","command":["echo"]}`,
		`{"type":"response","command":"parse","success":false,"error":"Failed to parse command: json: cannot unmarshal array into Go struct field command.command of type string"}`},
	{`{"id":"e","type":"get_messages_page","limit":"3"}`,
		`{"type":"response","command":"parse","success":false,"error":"Failed to parse command: json: cannot unmarshal string into Go struct field command.limit of type float64"}`},
	{`{"id":"e2","type":"get_messages_page","limit":1e400}`,
		`{"type":"response","command":"parse","success":false,"error":"Failed to parse command: json: cannot unmarshal number 1e400 into Go struct field command.limit of type float64"}`},
	{`{"id":"e3","type":"get_messages_page","limit":{"a":1}}`,
		`{"type":"response","command":"parse","success":false,"error":"Failed to parse command: json: cannot unmarshal object into Go struct field command.limit of type float64"}`},
	{`{"id":"e4","type":"set_sandbox","yolo":"yes"}`,
		`{"type":"response","command":"parse","success":false,"error":"Failed to parse command: json: cannot unmarshal string into Go struct field command.yolo of type bool"}`},
	{`{"id":"e5","type":"abort","enabled":1}`,
		`{"type":"response","command":"parse","success":false,"error":"Failed to parse command: json: cannot unmarshal number into Go struct field command.enabled of type bool"}`},
	{`{"id":"e6","type":"abort","waitSeconds":"1"}`,
		`{"type":"response","command":"parse","success":false,"error":"Failed to parse command: json: cannot unmarshal string into Go struct field command.waitSeconds of type float64"}`},
	{`{"id":"e7","type":"abort","jobId":{"x":[1, 2]},"protocolVersion":[true]}`,
		`{"id":"e7","type":"response","command":"abort","success":true}`},
	{`{"id":"f","type":"frobnicate"}`,
		`{"id":"f","type":"response","command":"frobnicate","success":false,"error":"Unknown command: frobnicate"}`},
	{`{"id":"f2","type":"frobnicate","message":5}`,
		`{"type":"response","command":"parse","success":false,"error":"Failed to parse command: json: cannot unmarshal number into Go struct field command.message of type string"}`},
	{`{"id":{"n":[1, 2], "s":"é\u00e9<"},"type":"frobnicate"}`,
		`{"id":{"n":[1,2],"s":"é\u00e9\u003c"},"type":"response","command":"frobnicate","success":false,"error":"Unknown command: frobnicate"}`},
	{`{"id":null,"type":"frobnicate"}`,
		`{"type":"response","command":"frobnicate","success":false,"error":"Unknown command: frobnicate"}`},
	{`{"id":12.50,"type":"abort"}`,
		`{"id":12.50,"type":"response","command":"abort","success":true}`},
	{`{"id":"f3","type":"ABORT"}`,
		`{"id":"f3","type":"response","command":"ABORT","success":false,"error":"Unknown command: ABORT"}`},
	{`{"id":"f4","type":""}`,
		`{"id":"f4","type":"response","command":"","success":false,"error":"Unknown command: "}`},
	{`{"ID":"g","TYPE":"set_auto_compaction","ENABLED":"x"}`,
		`{"type":"response","command":"parse","success":false,"error":"Failed to parse command: json: cannot unmarshal string into Go struct field command.enabled of type bool"}`},
	{`{"id":"h","type":"set_auto_compaction"}`,
		`{"id":"h","type":"response","command":"set_auto_compaction","success":false,"error":"set_auto_compaction needs \"enabled\" (true or false)"}`},
	{`{"id":"h1","type":"set_auto_compaction","enabled":null}`,
		`{"id":"h1","type":"response","command":"set_auto_compaction","success":false,"error":"set_auto_compaction needs \"enabled\" (true or false)"}`},
	{`{"id":"h2","Type":"set_auto_compaction","Enabled":true,"unknownField":1}`,
		`{"id":"h2","type":"response","command":"set_auto_compaction","success":true}`},
	{`{"type":"frobnicate","type":"abort","id":"w"}`,
		`{"id":"w","type":"response","command":"abort","success":true}`},
	{`{"type":"abort"} x`,
		`{"type":"response","command":"parse","success":false,"error":"Failed to parse command: invalid character 'x' after top-level value"}`},
	{`   {"type":"abort","id":"y"}   `,
		`{"id":"y","type":"response","command":"abort","success":true}`},
	{`{"id":"i","type":"prompt","message":"hi"}`,
		`{"id":"i","type":"response","command":"prompt","success":false,"error":"no model configured: use --model provider/model (providers: openai, anthropic, ollama, openrouter)"}`},
	{`{"id":"j","type":"prompt"}`,
		`{"id":"j","type":"response","command":"prompt","success":false,"error":"no model configured: use --model provider/model (providers: openai, anthropic, ollama, openrouter)"}`},
	{`{"id":"j2","type":"abort_and_prompt","message":" "}`,
		`{"id":"j2","type":"response","command":"abort_and_prompt","success":false,"error":"no model configured: use --model provider/model (providers: openai, anthropic, ollama, openrouter)"}`},
	{`{"id":"q","type":"steer"}`,
		`{"id":"q","type":"response","command":"steer","success":false,"error":"no model configured: use --model provider/model (providers: openai, anthropic, ollama, openrouter)"}`},
	{`{"id":"q2","type":"follow_up","message":"x"}`,
		`{"id":"q2","type":"response","command":"follow_up","success":false,"error":"no model configured: use --model provider/model (providers: openai, anthropic, ollama, openrouter)"}`},
	{`{"id":"k","type":"negotiate_protocol"}`,
		`{"id":"k","type":"response","command":"negotiate_protocol","success":false,"error":"Unsupported RPC protocol version: undefined"}`},
	{`{"id":"k2","type":"negotiate_protocol","protocolVersion":"1"}`,
		`{"id":"k2","type":"response","command":"negotiate_protocol","success":false,"error":"Unsupported RPC protocol version: \"1\""}`},
	{`{"id":"k3","type":"negotiate_protocol","protocolVersion":2}`,
		`{"id":"k3","type":"response","command":"negotiate_protocol","success":false,"error":"Unsupported RPC protocol version: 2"}`},
	{`{"id":"k4","type":"negotiate_protocol","protocolVersion":1.0}`,
		`{"id":"k4","type":"response","command":"negotiate_protocol","success":true,"data":{"protocolVersion":1}}`},
	{`{"id":"k5","type":"negotiate_protocol","protocolVersion": {"a" : 1}}`,
		`{"id":"k5","type":"response","command":"negotiate_protocol","success":false,"error":"Unsupported RPC protocol version: {\"a\" : 1}"}`},
	{`{"id":"k6","type":"negotiate_protocol","protocolVersion":null}`,
		`{"id":"k6","type":"response","command":"negotiate_protocol","success":false,"error":"Unsupported RPC protocol version: null"}`},
	{`{"id":"l","type":"set_sandbox","mode":"bogus"}`,
		`{"id":"l","type":"response","command":"set_sandbox","success":false,"error":"unknown sandbox mode \"bogus\" (want workspace-write, read-only or off)"}`},
	{`{"id":"l2","type":"set_sandbox","bash":"bogus"}`,
		`{"id":"l2","type":"response","command":"set_sandbox","success":false,"error":"bash: unknown sandbox mode \"bogus\" (want workspace-write, read-only or off)"}`},
	{`{"id":"l3","type":"set_sandbox","yolo":true,"mode":"off"}`,
		`{"id":"l3","type":"response","command":"set_sandbox","success":false,"error":"\"yolo\": true and \"mode\" cannot be combined"}`},
	{`{"id":"l4","type":"set_sandbox","mode":"bogus","bash":"bogus"}`,
		`{"id":"l4","type":"response","command":"set_sandbox","success":false,"error":"unknown sandbox mode \"bogus\" (want workspace-write, read-only or off)"}`},
	{`{"id":"m","type":"job_output"}`,
		`{"id":"m","type":"response","command":"job_output","success":false,"error":"Background jobs are not available in this mode."}`},
	{`{"id":"m2","type":"jobs"}`,
		`{"id":"m2","type":"response","command":"jobs","success":false,"error":"Background jobs are not available in this mode."}`},
	{`{"id":"m3","type":"job_input","jobId":"1","text":"y"}`,
		`{"id":"m3","type":"response","command":"job_input","success":false,"error":"Background jobs are not available in this mode."}`},
	{`{"id":"m4","type":"job_kill","jobId":1}`,
		`{"id":"m4","type":"response","command":"job_kill","success":false,"error":"Background jobs are not available in this mode."}`},
	{`{"id":"m5","type":"bash","command":"true","background":true}`,
		`{"id":"m5","type":"response","command":"bash","success":false,"error":"Background jobs are not available in this mode."}`},
	// The model commands without a model configured; set_model,
	// cycle_model, cycle_thinking_level and get_available_models answer
	// from goroutines of their own, so only this one is pinned in order.
	{`{"id":"n4","type":"set_thinking_level","level":"high"}`,
		`{"id":"n4","type":"response","command":"set_thinking_level","success":true}`},
	{`{"id":"n6","type":"set_auto_retry"}`,
		`{"id":"n6","type":"response","command":"set_auto_retry","success":false,"error":"set_auto_retry needs \"enabled\": true or false"}`},
	{`{"id":"n7","type":"set_auto_retry","enabled":false}`,
		`{"id":"n7","type":"response","command":"set_auto_retry","success":true}`},
	{`{"id":"n8","type":"abort_retry"}`,
		`{"id":"n8","type":"response","command":"abort_retry","success":true}`},
	{`{"id":"o","type":"switch_session","sessionPath":"x"}`,
		`{"id":"o","type":"response","command":"switch_session","success":false,"error":"switch_session is not available in this mode"}`},
	{`{"id":"p","type":"set_steering_mode","mode":"bogus"}`,
		`{"id":"p","type":"response","command":"set_steering_mode","success":false,"error":"invalid steering mode \"bogus\" (want \"all\" or \"one-at-a-time\")"}`},
	{`{"id":"p2","type":"set_follow_up_mode"}`,
		`{"id":"p2","type":"response","command":"set_follow_up_mode","success":false,"error":"invalid follow-up mode \"\" (want \"all\" or \"one-at-a-time\")"}`},
	{`{"id":"p3","type":"set_interrupt_mode","mode":"all"}`,
		`{"id":"p3","type":"response","command":"set_interrupt_mode","success":false,"error":"invalid interrupt mode \"all\" (want \"immediate\" or \"wait\")"}`},
	{`{"id":"p4","type":"set_steering_mode","mode":"all"}`,
		`{"id":"p4","type":"response","command":"set_steering_mode","success":true}`},
	{`{"id":"r","type":"compact","customInstructions":"x"}`,
		`{"id":"r","type":"response","command":"compact","success":false,"error":"no model configured: use --model provider/model (providers: openai, anthropic, ollama, openrouter)"}`},
	{`{"id":"s","type":"get_messages_page","limit":0}`,
		`{"id":"s","type":"response","command":"get_messages_page","success":false,"error":"RPC message page limit must be between 1 and 256"}`},
	{`{"id":"s2","type":"get_messages_page","limit":2.5}`,
		`{"id":"s2","type":"response","command":"get_messages_page","success":false,"error":"RPC message page limit must be between 1 and 256"}`},
	{`{"id":"s3","type":"get_messages_page","cursor":"bad"}`,
		`{"id":"s3","type":"response","command":"get_messages_page","success":false,"error":"Invalid RPC message cursor"}`},
	{`{"id":"s4","type":"get_messages_page","cursor":""}`,
		`{"id":"s4","type":"response","command":"get_messages_page","success":false,"error":"Invalid RPC message cursor"}`},
	{`{"id":"s5","type":"get_messages_page"}`,
		`{"id":"s5","type":"response","command":"get_messages_page","success":true,"data":{"messages":[],"totalMessages":0}}`},
	{`{"id":"t","type":"get_last_assistant_text"}`,
		`{"id":"t","type":"response","command":"get_last_assistant_text","success":true,"data":{"text":null}}`},
	{`{"id":"u","type":"get_messages"}`,
		`{"id":"u","type":"response","command":"get_messages","success":true,"data":{"messages":[]}}`},
	{`{"id":"v","type":"abort"}`,
		`{"id":"v","type":"response","command":"abort","success":true}`},
	{`{"id":"v2","type":"abort_bash"}`,
		`{"id":"v2","type":"response","command":"abort_bash","success":true}`},
	{`   `,
		``},
	{`{"id":"z","type":"abort"}`,
		`{"id":"z","type":"response","command":"abort","success":true}`},
}

// TestWireAnswersPinned pins the bytes of the answers to malformed and
// refused commands: parse errors, type errors of any command's field, a
// missing "type", unknown commands, id echo and the checks of each
// command's fields.
func TestWireAnswersPinned(t *testing.T) {
	pinAnswers(t, nil, wireCases)
}

// wireModelCases are the checks of a message, made once a model is
// configured.
var wireModelCases = []struct{ in, out string }{
	{`{"id":"a","type":"prompt"}`,
		`{"id":"a","type":"response","command":"prompt","success":false,"error":"prompt needs a non-empty \"message\""}`},
	{`{"id":"b","type":"prompt","message":" \n"}`,
		`{"id":"b","type":"response","command":"prompt","success":false,"error":"prompt needs a non-empty \"message\""}`},
	{`{"id":"c","type":"prompt","message":"x","streamingBehavior":"later"}`,
		`{"id":"c","type":"response","command":"prompt","success":false,"error":"streamingBehavior must be \"steer\" or \"followUp\", not \"later\""}`},
	{`{"id":"d","type":"prompt","streamingBehavior":"later"}`,
		`{"id":"d","type":"response","command":"prompt","success":false,"error":"prompt needs a non-empty \"message\""}`},
	{`{"id":"e","type":"abort_and_prompt","streamingBehavior":"later"}`,
		`{"id":"e","type":"response","command":"abort_and_prompt","success":false,"error":"abort_and_prompt needs a non-empty \"message\""}`},
	{`{"id":"f","type":"steer","message":""}`,
		`{"id":"f","type":"response","command":"steer","success":false,"error":"steer needs a non-empty \"message\""}`},
	{`{"id":"g","type":"follow_up"}`,
		`{"id":"g","type":"response","command":"follow_up","success":false,"error":"follow_up needs a non-empty \"message\""}`},
	{`{"id":"h","type":"steer","message":7}`,
		`{"type":"response","command":"parse","success":false,"error":"Failed to parse command: json: cannot unmarshal number into Go struct field command.message of type string"}`},
}

// TestWireModelAnswersPinned pins the answers to commands whose message
// is missing, with a model configured (it is never called).
func TestWireModelAnswersPinned(t *testing.T) {
	pinAnswers(t, refusingProvider{}, wireModelCases)
}

// refusingProvider is a model that fails every call.
type refusingProvider struct{}

func (refusingProvider) Name() string { return "openai" }

func (refusingProvider) Stream(context.Context, llm.Request, func(llm.Event)) (llm.Message, string, error) {
	return llm.Message{}, "", errors.New("refusingProvider: not to be called")
}

// pinAnswers serves the cases' lines and compares the answers, byte for
// byte, with theirs.
func pinAnswers(t *testing.T, provider llm.Provider, cases []struct{ in, out string }) {
	t.Helper()
	exec := bash.NewExecutor()
	t.Cleanup(exec.Close)
	dir := t.TempDir()
	cfg := Config{NewSession: func() (*agent.AgentSession, error) {
		return agent.New(dir, nil, exec, bash.ShellConfig{})
	}, Models: agent.ModelsOf(provider, "fake-model")}
	var in strings.Builder
	for _, c := range cases {
		in.WriteString(c.in + "\n")
	}
	var out bytes.Buffer
	if err := Serve(context.Background(), strings.NewReader(in.String()), &out, cfg); err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(got) == 0 || got[0]+"\n" != readyText {
		t.Fatalf("first line %q, want the ready line", got)
	}
	got = got[1:]
	want := []string{}
	for _, c := range cases {
		if c.out != "" {
			want = append(want, c.out)
		}
	}
	for i := range max(len(got), len(want)) {
		var g, w string
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			t.Errorf("answer %d:\n got %s\nwant %s", i, g, w)
		}
	}
}
