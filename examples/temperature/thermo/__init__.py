"""Temperature conversions between Celsius, Fahrenheit and Kelvin."""
