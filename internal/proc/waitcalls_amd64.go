package proc

// System call numbers of the calls a program waits for input in (x86-64).
var waitCalls = map[int]waitCall{
	0:   callRead,
	7:   callPoll,   // poll
	271: callPoll,   // ppoll
	23:  callSelect, // select
	270: callSelect, // pselect6
	232: callEpoll,  // epoll_wait
	281: callEpoll,  // epoll_pwait
	441: callEpoll,  // epoll_pwait2
}
