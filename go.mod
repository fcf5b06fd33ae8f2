module github.com/aguistate/aguistate

go 1.26

require (
	github.com/evanphx/json-patch/v5 v5.9.11
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3
	github.com/stretchr/testify v1.12.1
)

require (
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/text v0.41.0 // indirect
)
