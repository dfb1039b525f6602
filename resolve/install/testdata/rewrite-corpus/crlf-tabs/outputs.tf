output "vpc" {
	value = module.vpc
}
