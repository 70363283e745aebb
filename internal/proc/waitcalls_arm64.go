package proc

// System call numbers of the calls a program waits for input in (arm64).
var waitCalls = map[int]waitCall{
	63:  callRead,
	73:  callPoll,   // ppoll
	72:  callSelect, // pselect6
	22:  callEpoll,  // epoll_pwait
	441: callEpoll,  // epoll_pwait2
}
