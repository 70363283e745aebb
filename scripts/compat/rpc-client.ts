// Drives `agentsh --mode rpc` with omp's own RpcClient, unchanged, and
// reports every command of issue 15 as pass or fail. Run by run.sh (make
// compat) with bun:
//
//   OMP_DIR=...      folder holding node_modules/@oh-my-pi/pi-coding-agent
//   AGENTSH_BIN=...  the agentsh binary
//   COMPAT_WORK=...  a scratch folder (agentsh's working directory)
//   COMPAT_MODEL=openai/fake-model, plus OPENAI_BASE_URL/OPENAI_API_KEY of
//   the fake model server (internal/compat/cmd/fakeserve) in the environment
//
// Every call has its own timeout, so a command agentsh lacks (whose error
// response RpcClient cannot match) is a failure, never a hang.

const ompDir = need("OMP_DIR");
const agentsh = need("AGENTSH_BIN");
const work = need("COMPAT_WORK");
const model = process.env.COMPAT_MODEL ?? "openai/fake-model";
const callTimeout = Number(process.env.COMPAT_CALL_TIMEOUT_MS ?? "4000");
const prompt = "Say hello with bash, then tell me what it printed.";

function need(name: string): string {
	const v = process.env[name];
	if (!v) {
		console.error(`compat: ${name} is not set`);
		process.exit(2);
	}
	return v;
}

const { RpcClient } = await import(`${ompDir}/node_modules/@oh-my-pi/pi-coding-agent/src/modes/rpc/rpc-client.ts`);

type Result = { command: string; ok: boolean; note: string };
const results: Result[] = [];

class Timeout extends Error {}

function within<T>(p: Promise<T>, ms = callTimeout): Promise<T> {
	let timer: ReturnType<typeof setTimeout>;
	const t = new Promise<never>((_, reject) => {
		timer = setTimeout(() => reject(new Timeout(`no answer within ${ms} ms`)), ms);
	});
	return Promise.race([p, t]).finally(() => clearTimeout(timer));
}

function short(v: unknown): string {
	let s: string;
	try {
		s = typeof v === "string" ? v : JSON.stringify(v);
	} catch {
		s = String(v);
	}
	s = (s ?? "undefined").replace(/\s+/g, " ");
	return s.length > 140 ? `${s.slice(0, 140)}…` : s;
}

// check runs one command; check's function returns a note on success and
// throws (or returns an Error) on failure.
async function check(command: string, f: () => Promise<string | Error>): Promise<void> {
	let r: Result;
	try {
		const note = await f();
		r = note instanceof Error ? { command, ok: false, note: note.message } : { command, ok: true, note };
	} catch (e) {
		r = { command, ok: false, note: e instanceof Error ? e.message.split("\n")[0] : short(e) };
	}
	results.push(r);
	console.log(`${r.ok ? "PASS" : "FAIL"}  ${command.padEnd(24)} ${short(r.note)}`);
}

function expect(cond: boolean, what: string, got: unknown): string | Error {
	return cond ? short(got) : new Error(`${what}; got ${short(got)}`);
}

// raw sends commands RpcClient has no method for (or sends only in its
// start-up) straight to a fresh agentsh, one line each, and returns the
// responses by id.
async function raw(lines: Array<Record<string, unknown>>): Promise<Map<string, any>> {
	const proc = Bun.spawn([agentsh, "--mode", "rpc", "--model", model], {
		cwd: work,
		stdin: "pipe",
		stdout: "pipe",
		stderr: "ignore",
	});
	const got = new Map<string, any>();
	const reader = proc.stdout.getReader();
	const dec = new TextDecoder();
	let buf = "";
	const waitFor = async (pred: (m: any) => boolean): Promise<boolean> => {
		const deadline = Date.now() + callTimeout;
		for (;;) {
			let nl: number;
			while ((nl = buf.indexOf("\n")) >= 0) {
				const line = buf.slice(0, nl);
				buf = buf.slice(nl + 1);
				try {
					const m = JSON.parse(line);
					if (m?.type === "response" && m.id !== undefined) got.set(String(m.id), m);
					if (pred(m)) return true;
				} catch {}
			}
			const left = deadline - Date.now();
			if (left <= 0) return false;
			const r = await within(reader.read(), left).catch(() => null);
			if (!r || r.done) return false;
			buf += dec.decode(r.value, { stream: true });
		}
	};
	try {
		await waitFor(m => m?.type === "ready");
		for (const l of lines) {
			proc.stdin.write(`${JSON.stringify(l)}\n`);
			await proc.stdin.flush();
			await waitFor(m => m?.type === "response" && m.id === l.id);
		}
	} finally {
		proc.stdin.end();
		await within(proc.exited, 5000).catch(() => proc.kill("SIGKILL"));
	}
	return got;
}

function rawResult(r: any, f: (data: any) => string | Error = d => short(d)): string | Error {
	if (!r) return new Error("no response with the request's id");
	if (!r.success) return new Error(`error: ${r.error}`);
	return f(r.data);
}

const client = new RpcClient({
	command: [agentsh],
	cwd: work,
	model,
	terminationGraceMs: 2000,
});

const events: any[] = [];
let agentEnds = 0;

try {
	await within(client.start(), 30000);
	console.log("started agentsh with omp's RpcClient");
} catch (e) {
	console.log(`FAIL  start                    ${short(e instanceof Error ? e.message : e)}`);
	process.exit(1);
}
client.onEvent((e: any) => {
	events.push(e);
	if (e?.type === "agent_end") agentEnds++;
});

async function idle(ms = 20000): Promise<void> {
	await within(client.waitForIdle(ms), ms + 1000);
}

await check("negotiate_protocol", async () => {
	const r = await raw([{ id: "n1", type: "negotiate_protocol", protocolVersion: 1 }]);
	return rawResult(r.get("n1"), d => expect(typeof d?.protocolVersion === "number", "data.protocolVersion is a number", d));
});

await check("get_state", async () => {
	const s = await within(client.getState());
	return expect(typeof s?.isStreaming === "boolean" && typeof s?.sessionId === "string", "isStreaming and sessionId", s);
});

await check("prompt", async () => {
	await within(client.prompt(prompt));
	await idle();
	const texts = events
		.filter(e => e.type === "message_update" && e.assistantMessageEvent?.type === "text_delta")
		.map(e => e.assistantMessageEvent.delta)
		.join("");
	const blocks = events
		.filter(e => e.type === "message_end" && e.message?.role === "assistant")
		.flatMap(e => (Array.isArray(e.message.content) ? e.message.content.map((b: any) => b.type) : []));
	return expect(
		texts === "It printed hello." && blocks.includes("toolCall"),
		"text_delta events spelling the answer and a toolCall block in message_end",
		{ texts, blocks },
	);
});

await check("get_last_assistant_text", async () => {
	const t = await within(client.getLastAssistantText());
	return expect(t === "It printed hello.", "the answer's text", t);
});

await check("get_messages", async () => {
	const ms = await within(client.getMessages());
	const roles = (ms ?? []).map((m: any) => m.role);
	const arrays = (ms ?? []).every((m: any) => m.role === "bashExecution" || Array.isArray(m.content));
	return expect(roles.join(",") === "user,assistant,toolResult,assistant" && arrays, "user,assistant,toolResult,assistant with block contents", ms);
});

await check("get_messages_page", async () => {
	const p = await within(client.getMessagesPage({ limit: 2 }));
	return expect(Array.isArray(p?.messages) && p.messages.length === 2, "a page of 2 messages", p);
});

await check("get_session_stats", async () => {
	const s = await within(client.getSessionStats());
	return expect(typeof s?.tokens?.input === "number" && s.tokens.input > 0, "tokens.input > 0", s);
});

await check("bash", async () => {
	const r = await within(client.bash("echo hi"));
	return expect(r?.output === "hi\n" && r?.exitCode === 0, 'output "hi\\n", exitCode 0', r);
});

await check("abort_bash", async () => {
	const running = within(client.bash("sleep 30"), 15000);
	await Bun.sleep(500);
	await within(client.abortBash());
	const r = await running;
	return expect(r?.cancelled === true, "the running bash cancelled", r);
});

await check("steer", async () => {
	await within(client.steer("Also say bye."));
	return "accepted";
});

await check("follow_up", async () => {
	await within(client.followUp("And then stop."));
	return "accepted";
});

await check("abort", async () => {
	await within(client.abort());
	return "accepted";
});

await check("abort_and_prompt", async () => {
	const before = agentEnds;
	await within(client.abortAndPrompt(prompt));
	await idle();
	return expect(agentEnds > before, "a new run to its agent_end", { agentEnds: agentEnds - before });
});

await check("get_available_models", async () => {
	const ms = await within(client.getAvailableModels());
	return expect(Array.isArray(ms) && ms.some((m: any) => m.id === "fake-model"), "fake-model among the models", ms);
});

await check("set_model", async () => {
	const [provider, id] = model.split("/");
	const m = await within(client.setModel(provider, id));
	return expect(m?.id === id, `model ${id}`, m);
});

await check("cycle_model", async () => {
	const r = await within(client.cycleModel());
	return short(r);
});

await check("set_thinking_level", async () => {
	await within(client.setThinkingLevel("low"));
	const s = await within(client.getState());
	return expect(s?.thinkingLevel === "low", "get_state says low", s?.thinkingLevel);
});

await check("cycle_thinking_level", async () => {
	const r = await within(client.cycleThinkingLevel());
	return short(r);
});

await check("compact", async () => {
	const r = await within(client.compact(), 10000);
	return expect(typeof r?.summary === "string", "a summary", r);
});

await check("set_auto_compaction", async () => {
	await within(client.setAutoCompaction(false));
	const s = await within(client.getState());
	return expect(s?.autoCompactionEnabled === false, "get_state says off", s?.autoCompactionEnabled);
});

await check("set_auto_retry", async () => {
	await within(client.setAutoRetry(true));
	return "accepted";
});

await check("abort_retry", async () => {
	await within(client.abortRetry());
	return "accepted";
});

await check("set_steering_mode", async () => {
	await within(client.setSteeringMode("one-at-a-time"));
	const s = await within(client.getState());
	return expect(s?.steeringMode === "one-at-a-time", "get_state says one-at-a-time", s?.steeringMode);
});

await check("set_follow_up_mode", async () => {
	await within(client.setFollowUpMode("one-at-a-time"));
	const s = await within(client.getState());
	return expect(s?.followUpMode === "one-at-a-time", "get_state says one-at-a-time", s?.followUpMode);
});

await check("export_html", async () => {
	const out = `${work}/export.html`;
	const r = await within(client.exportHtml(out), 10000);
	const text = await Bun.file(r?.path ?? out)
		.text()
		.catch(() => "");
	return expect(text.includes("<html") && text.includes("It printed hello."), "an HTML file with the transcript", r);
});

await check("get_available_commands", async () => {
	const cs = await within(client.getAvailableCommands());
	return expect(Array.isArray(cs), "a list", cs);
});

await check("set_session_name", async () => {
	const r = await raw([{ id: "s1", type: "set_session_name", name: "compat run" }]);
	return rawResult(r.get("s1"));
});

let oldSession = "";
await check("new_session", async () => {
	oldSession = (await within(client.getState()).catch(() => ({})))?.sessionFile ?? "";
	const r = await within(client.newSession());
	const ms = await within(client.getMessages());
	return expect(r?.cancelled === false && Array.isArray(ms) && ms.length === 0, "not cancelled, no messages after", { r, ms });
});

await check("switch_session", async () => {
	if (!oldSession) return new Error("get_state gave no sessionFile to switch back to");
	const r = await within(client.switchSession(oldSession));
	const ms = await within(client.getMessages());
	return expect(r?.cancelled === false && Array.isArray(ms) && ms.length > 0, "back to the first session's messages", { r, n: ms?.length });
});

await check("unknown command", async () => {
	const r = await raw([{ id: "u1", type: "frobnicate" }]);
	const m = r.get("u1");
	return expect(m?.success === false && typeof m?.error === "string", "an error response carrying the id", m);
});

await within(client.stop(), 10000).catch(() => {});
const failed = results.filter(r => !r.ok);
console.log(`compat: ${results.length - failed.length}/${results.length} pass`);
process.exit(failed.length > 0 ? 1 : 0);
