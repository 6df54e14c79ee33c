package main

import "syscall"

func syscallGettid() int { return syscall.Gettid() }
