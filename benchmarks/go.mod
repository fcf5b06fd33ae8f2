module github.com/aguistate/aguistate/benchmarks

go 1.26

replace github.com/aguistate/aguistate => ../

require github.com/aguistate/aguistate v0.0.0-00010101000000-000000000000

require github.com/tmaxmax/go-sse v0.12.0

require github.com/evanphx/json-patch/v5 v5.9.11
