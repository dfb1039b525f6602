module "inner" {
	source = "git::https://git.example.test/acme/network.git?ref=v1.0.0" # tflock: version = ">= 1.0.0, < 2.0.0"
}
