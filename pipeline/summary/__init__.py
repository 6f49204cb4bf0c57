"""The run's statistics as partial -> merge -> finish, for both engines: the Summary."""
