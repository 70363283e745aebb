package agent

// SlashCommand is one of agentsh's slash commands: the TUI runs them, an
// RPC client lists them (get_available_commands). One list, so both agree.
type SlashCommand struct {
	Name        string // without the slash
	Args        string // what it takes ("" = nothing), e.g. "[provider/name]"
	Description string
}

// SlashCommands is every slash command, in the TUI menu's order.
var SlashCommands = []SlashCommand{
	{Name: "help", Description: "lists keys and commands"},
	{Name: "new", Description: "starts a fresh session"},
	{Name: "resume", Description: "resumes a saved session"},
	{Name: "model", Args: "[provider/name]", Description: "shows or switches the model"},
	{Name: "jobs", Description: "opens the jobs panel"},
	{Name: "permissions", Description: "lists saved approval rules"},
	{Name: "copy", Description: "copies the last answer (OSC 52)"},
	{Name: "compact", Args: "[focus]", Description: "summarizes the older turns for the model"},
	{Name: "export", Args: "[path]", Description: "writes the session as an HTML file"},
	{Name: "mouse", Description: "turns mouse capture on or off"},
	{Name: "status", Description: "shows the model, session, folder, sandbox, context and jobs"},
	// clear and quit are the names other agents' users type for new and
	// exit: the same commands.
	{Name: "clear", Description: "starts a fresh session (as /new)"},
	{Name: "exit", Description: "quits"},
	{Name: "quit", Description: "quits (as /exit)"},
}
