"""Helpers shared by the tests: live servers, wire validation, a probe toolkit."""
