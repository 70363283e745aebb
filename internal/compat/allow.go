package compat

// OmpOnly lists what omp writes that agentsh need not produce, each with
// the reason. Keep it small: everything else omp writes, agentsh must too.
var OmpOnly = []Allowed{
	{"event:extension_ui_request", "omp's extension UI protocol (a widget of its autoresearch extension); agentsh has no extensions"},
	{"event:advisor_cost_changed", "omp's advisor feature (a second model reviewing the first); agentsh has none"},
	{"event:available_commands_update", "pushed when omp's slash-command/skill catalogue changes; agentsh's commands are fixed and get_available_commands answers them"},
	{"message_start(assistant):.message.content", "the answer is empty when it starts; omp serializes its message object after the stream has filled it (the fake server sends the whole answer at once), so its message_start shows the finished content"},
	{".toolCall.partialArgs", "omp keeps the streamed argument text of a tool call in the block; arguments carries the parsed value"},
	{".toolCall.streamIndex", "omp's index of the call in the provider stream; contentIndex says where the block is"},
	{"[toolCall].arguments.*", "the fields of a call's arguments are the tool's own, and while they stream (toolcall_start/_delta) agentsh's partial call has {} where omp's late-serialized message shows the finished ones; the arguments object itself is still required"},
	{"[toolCall].partialArgs", "omp keeps the streamed argument text of a tool call in the block; arguments carries the parsed value"},
	{"[toolCall].streamIndex", "omp's index of the call in the provider stream; contentIndex of the events says where the block is"},
	{".contextSnapshot", "omp's snapshot of its context manager (append-only context mode) at the message; no wire contract"},
	{".errorId", "omp's internal bit-field error classifier (utils/error-id.ts); errorMessage and stopReason carry the error"},
	{".responseId", "the provider's id of an assistant message's response, optional in omp's AssistantMessage; nothing in the protocol reads it"},
	{".ttft", "omp's timing telemetry of a response (time to first token), optional in its AssistantMessage"},
	{".duration", "omp's timing telemetry of a response (request duration), optional in its AssistantMessage"},
	{".completedAt", "omp's timing telemetry of a response (its end, stamped at message_end), optional in its AssistantMessage"},
	{".dumpTools", "get_state's debug dump of omp's tool definitions"},
	{".fastModeActive", "omp's fast-mode (priority service tier) switch"},
	{".fastModeEnabled", "omp's fast-mode (priority service tier) switch"},
	{".todoPhases", "omp's todo tool state (set_todos); agentsh has no todo tool"},
	{".model.compat", "omp's per-model provider quirks table"},
	{".model.identity", "omp's model-family identity for its registry"},
	{".model.requiresGlyphTokenization", "omp's registry flag for one provider's tokenizer"},
	{".model.supportsComputerUse", "omp's computer-use tool flag; agentsh has no such tool"},
	{".details.*", "a tool's details are the tool's own (omp's bash: timeoutSeconds, wallTimeMs); the object itself is still required"},
}
