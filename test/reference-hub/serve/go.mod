module example.invalid/refhub/serve

go 1.26
