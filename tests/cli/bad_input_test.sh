echo "TODO"; exit 1
