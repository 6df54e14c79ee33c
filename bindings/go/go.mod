module github.com/c10c/c10c-go

go 1.19
