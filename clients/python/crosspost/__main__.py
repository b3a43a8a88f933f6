from crosspost.cli import main

main()
